# Sourced by the scripts in scripts/kube: the pinned versions of every part of the test cluster and
# where their builds are cached (outside the repository, keyed by version, reused by later runs).
source "$(dirname "${BASH_SOURCE[0]}")/../toolchain.sh"

KUBE_VERSION=v1.34.4
KUBE_STAGING_VERSION=v0.34.4
COREDNS_VERSION=v1.13.2
# NetworkPolicy enforcement beside the bridge plugin (iptables and ipset; its firewall alone). The
# only version the module proxy serves here; reported security flaws in it do not reach this
# throwaway cluster on a closed bridge.
KUBE_ROUTER_VERSION=v2.1.0
# Debian bookworm packages: containerd, runc, the CNI plugins, etcd, and the tools the scripts use.
KUBE_DEBIAN_PACKAGES=(containerd runc containernetworking-plugins etcd-server iptables ipset conntrack
  mmdebstrap buildah fuse-overlayfs uidmap iproute2 curl ca-certificates gcc libc6-dev)

# The schema-upgrade scenario installs the release before the cluster tests existed (chart and image
# of this commit, from the git history), then upgrades it to the working tree's.
PREVIOUS_RELEASE=5d29356

KUBE_CACHE="$TASKPLANS_CACHE/kube"
KUBE_BIN="$KUBE_CACHE/bin-$KUBE_VERSION"
# The Go module and build caches of these builds (several GB): kept apart from the machine's, so that
# removing $KUBE_CACHE makes the next run cold.
KUBE_GOCACHE="$KUBE_CACHE/go-build"
KUBE_GOMODCACHE="$KUBE_CACHE/go-mod"
KUBE_IMAGES="$KUBE_CACHE/images"
export KUBE_PREVIOUS_TREE="$KUBE_CACHE/release-$PREVIOUS_RELEASE"
mkdir -p "$KUBE_BIN" "$KUBE_IMAGES"
export PATH="$KUBE_BIN:$PATH"

# Where a running test cluster keeps its state, its logs and its kubeconfig.
KUBE_RUN="${KUBE_RUN:-/run/taskplans-kube}"
export KUBECONFIG="$KUBE_RUN/admin.kubeconfig"

log() { echo "[kube $(date +%H:%M:%S)] $*" >&2; }

# Host settings a kubelet or kube-proxy changes, saved by up.sh and restored by down.sh.
KUBE_SYSCTLS="net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables
  vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys
  kernel.keys.root_maxbytes net.ipv4.conf.all.route_localnet net.netfilter.nf_conntrack_max"
# Directories the kubelet, containerd and CNI create whatever they are configured with.
KUBE_HOST_DIRS="/var/lib/kubelet /var/log/pods /var/log/containers /opt/containerd /var/lib/cni /etc/cni
  /var/run/netns /run/containerd /var/lib/containerd /etc/kubernetes"

# What the host looks like to the parts above (sysctls, firewall rules and chains, links, routes,
# network namespaces, directories): test.sh compares it before up.sh and after down.sh.
host_snapshot() (
  # A reading, not a check: a tool that is missing or finds nothing prints nothing.
  set +e +o pipefail
  local s d
  for s in $KUBE_SYSCTLS; do echo "$s=$(sysctl -n "$s" 2>/dev/null)"; done
  for s in iptables-save ip6tables-save; do
    "$s" | grep -E '^(-A|:)' | grep -vE '^:(INPUT|OUTPUT|FORWARD|PREROUTING|POSTROUTING) ACCEPT' |
      sed -e 's/ \[[0-9]*:[0-9]*\]$//' -e "s/^/$s /"
  done
  ip -br link | awk '{print "link", $1}'
  ip route | sed 's/^/route /'
  ip netns list | sed 's/^/netns /'
  ipset list -n 2>/dev/null | sed 's/^/ipset /'
  for d in $KUBE_HOST_DIRS "$KUBE_RUN"; do [ -e "$d" ] && echo "exists $d"; done
  true
)
