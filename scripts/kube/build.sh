#!/usr/bin/env bash
# Builds everything the test cluster runs, each part cached by version (a warm run only checks stamps):
# Debian's container runtime and etcd, the Kubernetes binaries, CoreDNS and kube-router from the Go
# module proxy, and the images (see images.sh). Cold: about 25 minutes on two cores.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

ensure_debian_packages() {
  local missing=() p
  for p in "${KUBE_DEBIAN_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return
  [ "$(id -u)" = 0 ] || { echo "the cluster needs root (it runs a kubelet); missing: ${missing[*]}" >&2; exit 1; }
  log "installing ${missing[*]}"
  apt-get update -qq
  # policy-rc.d: the packages' services (containerd) must not start by themselves; up.sh starts its own.
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  rm -f /usr/sbin/policy-rc.d
}

# Static binaries, with this cluster's own Go caches.
go_() { CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" GOCACHE="$KUBE_GOCACHE" GOMODCACHE="$KUBE_GOMODCACHE" go "$@"; }

# The Kubernetes binaries from the k8s.io/kubernetes module. As a dependency its ./staging replaces do
# not apply, so a throwaway module pins each staging module to its published version.
build_kubernetes() {
  local stamp="$KUBE_BIN/.kubernetes" src="$KUBE_CACHE/src-kubernetes-$KUBE_VERSION"
  [ "$(cat "$stamp" 2>/dev/null)" = "$KUBE_VERSION" ] && return
  log "building Kubernetes $KUBE_VERSION (cold: about 10 minutes)"
  mkdir -p "$src"
  curl -fsS "https://proxy.golang.org/k8s.io/kubernetes/@v/$KUBE_VERSION.mod" >"$src/kubernetes.mod"
  {
    echo "module taskplans.local/kube-build"
    echo "go 1.24.0"
    echo "require k8s.io/kubernetes $KUBE_VERSION"
    sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#replace \1 => \1 '"$KUBE_STAGING_VERSION"'#p' "$src/kubernetes.mod"
  } >"$src/go.mod"
  local v=k8s.io/component-base/version c=k8s.io/client-go/pkg/version ldflags="-s -w"
  local x
  for x in $v $c; do
    ldflags+=" -X $x.gitVersion=$KUBE_VERSION -X $x.gitMajor=1 -X $x.gitMinor=34 -X $x.gitTreeState=clean"
  done
  (cd "$src" && go_ build -ldflags "$ldflags" -o "$KUBE_BIN/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet \
    k8s.io/kubernetes/cmd/kube-proxy k8s.io/kubernetes/cmd/kubectl)
  echo "$KUBE_VERSION" >"$stamp"
}

# Cluster DNS: CoreDNS with only the plugins a closed cluster needs (no forward: nothing leaves).
build_coredns() {
  local stamp="$KUBE_BIN/.coredns" src="$KUBE_CACHE/src-coredns-$COREDNS_VERSION"
  local want="$COREDNS_VERSION bind ready health errors cache kubernetes"
  [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && return
  log "building CoreDNS $COREDNS_VERSION (cold: about 2 minutes)"
  mkdir -p "$src"
  cat >"$src/main.go" <<'GO'
// A CoreDNS with only the plugins the test cluster uses.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/ready"
	"github.com/coredns/coredns/coremain"
)

func init() {
	// The order of CoreDNS's own plugin.cfg.
	dnsserver.Directives = []string{"bind", "ready", "health", "errors", "cache", "kubernetes"}
}

func main() { coremain.Run() }
GO
  printf 'module taskplans.local/coredns\n\ngo 1.24.0\n\nrequire github.com/coredns/coredns %s\n' "$COREDNS_VERSION" >"$src/go.mod"
  (cd "$src" && go_ build -ldflags "-s -w" -o "$KUBE_BIN/coredns" .)
  echo "$want" >"$stamp"
}

build_kube_router() {
  local stamp="$KUBE_BIN/.kube-router"
  [ "$(cat "$stamp" 2>/dev/null)" = "$KUBE_ROUTER_VERSION" ] && return
  log "building kube-router $KUBE_ROUTER_VERSION (cold: about 3 minutes)"
  CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOCACHE="$KUBE_GOCACHE" GOMODCACHE="$KUBE_GOMODCACHE" GOBIN="$KUBE_BIN" \
    go install -ldflags "-s -w" "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@$KUBE_ROUTER_VERSION"
  echo "$KUBE_ROUTER_VERSION" >"$stamp"
}

main() {
  ensure_debian_packages
  build_kubernetes
  build_coredns
  build_kube_router
  bash "$(dirname "$0")/images.sh"
}

main "$@"; exit # on one line: bash reads a script while running it
