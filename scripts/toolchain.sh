# Sourced by scripts/generate.sh and scripts/test.sh: pinned tools outside the repository, in a cache
# (built or installed once per machine, reused afterwards). Fails naming what to install when a
# language toolchain is missing; nothing is ever silently skipped.
TASKPLANS_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/taskplans"
TASKPLANS_BIN="$TASKPLANS_CACHE/bin"
mkdir -p "$TASKPLANS_BIN"
export PATH="$TASKPLANS_BIN:$PATH"

require_command() { # command, what to install
  command -v "$1" >/dev/null 2>&1 || { echo "$1 is needed ($2); install it and run again" >&2; exit 1; }
}

# go install <module>@<version> into the cache unless <binary> at that version is already there.
ensure_go_tool() { # binary, module path, version
  local stamp="$TASKPLANS_BIN/.$1.version"
  if [ ! -x "$TASKPLANS_BIN/$1" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$3" ]; then
    require_command go "Go 1.22 or newer, https://go.dev/doc/install"
    echo "installing $1 $3 into $TASKPLANS_BIN" >&2
    GOBIN="$TASKPLANS_BIN" GOFLAGS=-buildvcs=false go install "$2@$3"
    echo "$3" >"$stamp"
  fi
}

# A Python virtual environment holding exactly a requirements file; rebuilt when the file changes.
# Prints the environment's directory.
ensure_venv() { # name, requirements file
  local hash dir
  hash=$(sha256sum "$2" | cut -c1-12)
  dir="$TASKPLANS_CACHE/venv-$1-$hash"
  if [ ! -x "$dir/bin/python" ] || [ ! -f "$dir/.complete" ]; then
    require_command python3 "Python 3.9 or newer with the venv module (Debian: python3-venv)"
    echo "creating the Python environment $1 in $dir" >&2
    rm -rf "$dir"
    python3 -m venv "$dir" >&2
    "$dir/bin/pip" install --quiet --disable-pip-version-check -r "$2" >&2
    touch "$dir/.complete"
  fi
  echo "$dir"
}

# helm, for the chart tests and the test cluster.
HELM_VERSION=v3.22.0
ensure_helm() {
  command -v helm >/dev/null 2>&1 || ensure_go_tool helm helm.sh/helm/v3/cmd/helm "$HELM_VERSION"
}

# grpcurl, for the TLS test (what operators run against the service: `grpcurl -cacert ...`).
GRPCURL_VERSION=v1.9.4
ensure_grpcurl() {
  ensure_go_tool grpcurl github.com/fullstorydev/grpcurl/cmd/grpcurl "$GRPCURL_VERSION"
}

# grpc-health-probe, the probe Kubernetes users run against gRPC services: the reference-clients tests
# run it against the plain, TLS and mTLS ports (test/integration/doors/health-probe.test.ts).
GRPC_HEALTH_PROBE_VERSION=v0.4.63
ensure_grpc_health_probe() {
  ensure_go_tool grpc-health-probe github.com/grpc-ecosystem/grpc-health-probe "$GRPC_HEALTH_PROBE_VERSION"
}

# connectconformance, Connect's conformance runner: its reference clients test the HTTP door's direct
# paths (test/integration/doors/connect-conformance.test.ts).
CONNECT_CONFORMANCE_VERSION=v1.0.7
ensure_connectconformance() {
  ensure_go_tool connectconformance connectrpc.com/conformance/cmd/connectconformance "$CONNECT_CONFORMANCE_VERSION"
}

PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2
ensure_codegen_tools() {
  ensure_go_tool protoc-gen-go google.golang.org/protobuf/cmd/protoc-gen-go "$PROTOC_GEN_GO_VERSION"
  ensure_go_tool protoc-gen-go-grpc google.golang.org/grpc/cmd/protoc-gen-go-grpc "$PROTOC_GEN_GO_GRPC_VERSION"
  CODEGEN_VENV=$(ensure_venv codegen clients/python/codegen-requirements.txt)
}

# A Node tool directory (scripts/tools/NAME: package.json and package-lock.json) installed with `npm ci`
# into the cache, again when its lockfile changes. Prints the installed directory.
ensure_npm_tools() { # name
  local src="scripts/tools/$1" hash dir
  hash=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -c1-12)
  dir="$TASKPLANS_CACHE/npm-$1-$hash"
  if [ ! -f "$dir/.complete" ]; then
    echo "installing the Node tools $1 into $dir" >&2
    rm -rf "$dir" && mkdir -p "$dir"
    cp "$src/package.json" "$src/package-lock.json" "$dir/"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
    touch "$dir/.complete"
  fi
  echo "$dir"
}
