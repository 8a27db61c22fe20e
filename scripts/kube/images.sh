#!/usr/bin/env bash
# Builds the test cluster's images with buildah (no registry is reachable, nothing is pulled) and
# saves each as a docker-archive tar in the cache, which up.sh imports into containerd:
# - the Debian base: an mmdebstrap rootfs, also tagged with the Dockerfile's FROM name once the
#   machine's Node.js 20 and npm are added (the official node image is the same Debian plus Node);
# - the service image: the project's Dockerfile as shipped, `buildah build --pull=never`;
# - MariaDB and Redis from Debian's packages (images/*.Containerfile), and the pod sandbox's pause.
# Each tar is rebuilt only when its recipe or inputs change (a content hash in its name).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
HERE="$ROOT/scripts/kube/images"

buildah_() { buildah --root "$KUBE_CACHE/buildah/root" --runroot "$KUBE_CACHE/buildah/run" --storage-driver vfs "$@"; }

hash_of() { # files or directories -> a short content hash
  find "$@" -type f -print0 | sort -z | xargs -0 sha256sum | sed "s# $ROOT/# #" | sha256sum | cut -c1-16
}

# Saves an image held by buildah as $KUBE_IMAGES/<file>.tar (docker-archive, named <name>).
save() { # image name, tar file
  rm -f "$2.partial"
  buildah_ push --quiet "$1" "docker-archive:$2.partial:$1" >/dev/null
  mv "$2.partial" "$2"
}

# The Debian bookworm rootfs every image starts from (about 150 s cold).
debian_base() {
  local name=localhost/taskplans-kube/debian:bookworm
  local key=bookworm-minbase-ca-certificates-libstdc++6
  if [ "$(cat "$KUBE_CACHE/.debian-base" 2>/dev/null)" = "$key" ] && buildah_ inspect "$name" >/dev/null 2>&1; then return; fi
  log "building the Debian base rootfs (mmdebstrap, about 150 s)"
  local tar="$KUBE_CACHE/debian-rootfs.tar"
  mmdebstrap --quiet --variant=minbase --include=ca-certificates,libstdc++6 bookworm "$tar" http://deb.debian.org/debian
  local c; c=$(buildah_ from scratch)
  buildah_ add --quiet "$c" "$tar" / >/dev/null
  buildah_ config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd bash "$c"
  buildah_ commit --quiet --rm "$c" "$name" >/dev/null
  rm -f "$tar"
  echo "$key" >"$KUBE_CACHE/.debian-base"
}

# The Dockerfile's FROM: the Debian base plus this machine's Node.js 20, its headers and its npm,
# where the official image keeps them (/usr/local). Two settings of this machine come along, as an
# organization's base image carries its own: its certificate authorities (the registry is reached
# through them here) and npm's `nodedir` (node-gyp builds better-sqlite3 against the local headers,
# since nodejs.org, where it would download them, is not reachable).
node_base() {
  local name=docker.io/library/node:20-bookworm-slim key cas=/usr/local/share/ca-certificates
  key=$(node --version)-nodedir-$(cat "$KUBE_CACHE/.debian-base")-$({ [ -d "$cas" ] && hash_of "$cas"; } || echo none)
  if [ "$(cat "$KUBE_CACHE/.node-base" 2>/dev/null)" = "$key" ] && buildah_ inspect "$name" >/dev/null 2>&1; then return; fi
  log "making $name from the Debian base and Node.js $(node --version)"
  local c npm_dir; c=$(buildah_ from --pull=never localhost/taskplans-kube/debian:bookworm)
  npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
  buildah_ copy --quiet "$c" "$(readlink -f "$(command -v node)")" /usr/local/bin/node >/dev/null
  buildah_ copy --quiet "$c" "$npm_dir" /usr/local/lib/node_modules/npm >/dev/null
  buildah_ copy --quiet "$c" "$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")/include/node" \
    /usr/local/include/node >/dev/null
  [ -d "$cas" ] && buildah_ copy --quiet "$c" "$cas" /usr/local/share/ca-certificates >/dev/null
  buildah_ run --isolation chroot --network host "$c" -- sh -c 'ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm &&
    ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx && update-ca-certificates >/dev/null &&
    mkdir -p /usr/local/etc && echo nodedir=/usr/local >/usr/local/etc/npmrc && node --version && npm --version' >/dev/null
  buildah_ config --env NODE_VERSION="$(node --version | tr -d v)" \
    --env NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt --cmd node "$c"
  buildah_ commit --quiet --rm "$c" "$name" >/dev/null
  echo "$key" >"$KUBE_CACHE/.node-base"
}

# `buildah build` of a Containerfile, saved as a tar named by the hash of its inputs.
build_image() { # image name, tar prefix, base stamp (.debian-base or .node-base), context dir, Containerfile, hash inputs...
  local name=$1 prefix=$2 base=$3 context=$4 file=$5; shift 5
  local key; key=$(hash_of "$file" "$@")-$(cat "$KUBE_CACHE/$base")
  key=$(echo "$key" | sha256sum | cut -c1-12)
  local tar="$KUBE_IMAGES/$prefix-$key.tar"
  if [ -f "$tar" ]; then echo "$tar"; return; fi
  log "building $name ($(basename "$file"))"
  buildah_ build --quiet --pull=never --isolation chroot --network host --layers=false -f "$file" -t "$name" "$context" >&2
  rm -f "$KUBE_IMAGES/$prefix"-*.tar
  save "$name" "$tar"
  echo "$tar"
}

pause_image() {
  local key; key=$(hash_of "$HERE/pause.c")
  local tar="$KUBE_IMAGES/pause-$key.tar"
  [ -f "$tar" ] && return
  log "building the pause image"
  local work; work=$(mktemp -d)
  gcc -static -O2 -o "$work/pause" "$HERE/pause.c"
  local c; c=$(buildah_ from scratch)
  buildah_ copy --quiet "$c" "$work/pause" /pause >/dev/null
  buildah_ config --entrypoint '["/pause"]' "$c"
  buildah_ commit --quiet --rm "$c" registry.k8s.io/pause:3.10 >/dev/null
  rm -rf "$work"
  rm -f "$KUBE_IMAGES"/pause-*.tar
  save registry.k8s.io/pause:3.10 "$tar"
}

# The previous release: its tree from the git history, its image from its own Dockerfile.
previous_release() {
  local tar="$KUBE_IMAGES/taskplans-previous-$PREVIOUS_RELEASE.tar"
  if [ ! -f "$KUBE_PREVIOUS_TREE/.complete" ]; then
    git -C "$ROOT" cat-file -e "$PREVIOUS_RELEASE^{commit}" 2>/dev/null ||
      { echo "commit $PREVIOUS_RELEASE (the previous release) is not in this clone: fetch the full history" >&2; exit 1; }
    rm -rf "$KUBE_PREVIOUS_TREE" && mkdir -p "$KUBE_PREVIOUS_TREE"
    git -C "$ROOT" archive "$PREVIOUS_RELEASE" | tar -x -C "$KUBE_PREVIOUS_TREE"
    touch "$KUBE_PREVIOUS_TREE/.complete"
  fi
  [ -f "$tar" ] && return
  log "building the previous release's image ($PREVIOUS_RELEASE, its own Dockerfile)"
  buildah_ build --quiet --pull=never --isolation chroot --network host --layers=false -t localhost/taskplans:previous \
    "$KUBE_PREVIOUS_TREE" >&2
  rm -f "$KUBE_IMAGES"/taskplans-previous-*.tar
  save localhost/taskplans:previous "$tar"
}

main() {
  # buildah creates an empty /etc/cni/net.d at start even with host networking: remove it again.
  local made_cni=""
  [ -e /etc/cni ] || made_cni=1
  mkdir -p "$KUBE_CACHE/buildah"
  debian_base
  node_base
  pause_image
  build_image localhost/taskplans-kube/mariadb:test mariadb .debian-base "$HERE" "$HERE/mariadb.Containerfile" "$HERE/mariadb-entrypoint.sh" >/dev/null
  build_image localhost/taskplans-kube/redis:test redis .debian-base "$HERE" "$HERE/redis.Containerfile" >/dev/null
  # The service: the Dockerfile as shipped, on the files it copies.
  build_image localhost/taskplans:test taskplans .node-base "$ROOT" "$ROOT/Dockerfile" \
    "$ROOT/package.json" "$ROOT/package-lock.json" "$ROOT/tsconfig.json" "$ROOT/tsconfig.build.json" \
    "$ROOT/proto" "$ROOT/generated" "$ROOT/tls" "$ROOT/clients/ts/package.json" "$ROOT/mcp/package.json" "$ROOT/cli/package.json" "$ROOT/src" >/dev/null
  previous_release
  [ -n "$made_cni" ] && rm -rf /etc/cni
  ls -1 "$KUBE_IMAGES"
}

main "$@"; exit # on one line: bash reads a script while running it
