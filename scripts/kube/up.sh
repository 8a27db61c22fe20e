#!/usr/bin/env bash
# Brings up a single-node Kubernetes cluster on this machine from the binaries build.sh made:
# etcd, the control plane, containerd and the kubelet, kube-proxy, CoreDNS and kube-router's
# NetworkPolicy firewall, all on a CNI bridge
# (cni0, 10.244.0.1/24) so that nothing listens on or leaves through the machine's own interfaces.
# First saves everything on the host that a kubelet and kube-proxy change; down.sh restores it.
# Prints nothing but progress; the cluster is ready when it returns (kubeconfig: $KUBECONFIG).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
HERE="$(cd "$(dirname "$0")" && pwd)"

NODE_IP=10.244.0.1
NODE_NAME=taskplans-kube
[ "$(id -u)" = 0 ] || { echo "the test cluster needs root (kubelet, containerd, iptables)" >&2; exit 1; }
[ -e "$KUBE_RUN/host-state" ] && { echo "$KUBE_RUN exists: a cluster is up or was not torn down; run scripts/kube/down.sh" >&2; exit 1; }
mkdir -p "$KUBE_RUN"/{pki,logs,pids,cni/net.d,cni/ipam,containerd,kubelet,etcd}
cd "$KUBE_RUN"

# --- what down.sh restores -----------------------------------------------------------------------
save_host_state() {
  mkdir -p host-state
  local s
  for s in $KUBE_SYSCTLS; do sysctl -n "$s" >"host-state/sysctl.$s" 2>/dev/null || true; done
  iptables-save >host-state/iptables
  ip6tables-save >host-state/ip6tables
  ipset list -n | sort >host-state/ipsets
  ip netns list | awk '{print $1}' | sort >host-state/netns
  local d
  for d in $KUBE_HOST_DIRS; do [ -e "$d" ] && echo "$d"; done >host-state/existing-dirs || true
}

start() { # name, command... (in the background; PID recorded, output to logs/<name>.log)
  local name=$1; shift
  "$@" >"logs/$name.log" 2>&1 &
  echo $! >"pids/$name"
}

wait_for() { # what, seconds, command...
  local what=$1 secs=$2; shift 2
  local end=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || { log "timed out waiting for $what"; return 1; }
    sleep 0.5
  done
}

# --- certificates: one CA; the admin identity is shared by the control plane's own clients ----------
make_pki() {
  cd pki
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=taskplans-kube-ca -keyout ca.key -out ca.crt 2>/dev/null
  openssl genrsa -out sa.key 2048 2>/dev/null && openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  cert() { # name, subject, extensions
    openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$1.key" -out "$1.csr" 2>/dev/null
    printf '%s\n' "$3" >"$1.ext"
    openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile "$1.ext" -out "$1.crt" 2>/dev/null
  }
  cert apiserver /CN=kube-apiserver "subjectAltName=IP:$NODE_IP,IP:10.96.0.1,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local
extendedKeyUsage=serverAuth"
  cert admin "/O=system:masters/CN=admin" "extendedKeyUsage=clientAuth"
  cd ..
  cat >admin.kubeconfig <<KC
apiVersion: v1
kind: Config
clusters: [{name: taskplans-kube, cluster: {server: "https://$NODE_IP:6443", certificate-authority: $KUBE_RUN/pki/ca.crt}}]
users: [{name: admin, user: {client-certificate: $KUBE_RUN/pki/admin.crt, client-key: $KUBE_RUN/pki/admin.key}}]
contexts: [{name: taskplans-kube, context: {cluster: taskplans-kube, user: admin}}]
current-context: taskplans-kube
KC
}

# --- the network: a bridge the pods join; Service addresses routed onto it; the rest of the pod range dropped
make_network() {
  sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
  ip link add cni0 type bridge
  ip addr add "$NODE_IP/24" dev cni0
  ip link set cni0 up
  ip route add 10.96.0.0/16 dev cni0
  ip route add blackhole 10.244.0.0/16
  cat >cni/net.d/10-bridge.conflist <<CNI
{"cniVersion": "0.4.0", "name": "taskplans-kube", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$KUBE_RUN/cni/ipam", "ranges": [[{"subnet": "10.244.0.0/24", "gateway": "$NODE_IP"}]],
            "routes": [{"dst": "0.0.0.0/0"}]}}]}
CNI
}

start_control_plane() {
  start etcd etcd --name taskplans-kube --data-dir "$KUBE_RUN/etcd" \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster taskplans-kube=http://127.0.0.1:2380
  wait_for etcd 30 curl -fsS http://127.0.0.1:2379/health
  start kube-apiserver kube-apiserver --etcd-servers http://127.0.0.1:2379 \
    --bind-address "$NODE_IP" --advertise-address "$NODE_IP" --secure-port 6443 \
    --service-cluster-ip-range 10.96.0.0/16 --authorization-mode Node,RBAC \
    --client-ca-file pki/ca.crt --tls-cert-file pki/apiserver.crt --tls-private-key-file pki/apiserver.key \
    --kubelet-client-certificate pki/admin.crt --kubelet-client-key pki/admin.key \
    --kubelet-preferred-address-types InternalIP \
    --service-account-key-file pki/sa.pub --service-account-signing-key-file pki/sa.key \
    --service-account-issuer https://kubernetes.default.svc.cluster.local
  wait_for kube-apiserver 90 kubectl get --raw /readyz
  start kube-controller-manager kube-controller-manager --kubeconfig admin.kubeconfig --bind-address 127.0.0.1 \
    --leader-elect=false --service-account-private-key-file pki/sa.key --root-ca-file pki/ca.crt \
    --use-service-account-credentials=false
  start kube-scheduler kube-scheduler --kubeconfig admin.kubeconfig --bind-address 127.0.0.1 --leader-elect=false
}

start_node() {
  cat >containerd/config.toml <<TOML
version = 2
root = "$KUBE_RUN/containerd/root"
state = "$KUBE_RUN/containerd/state"
[grpc]
  address = "$KUBE_RUN/containerd/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10"
  # runc cannot write /proc/self/oom_score_adj here (no CAP_SYS_RESOURCE); see kubernetes-notes.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$KUBE_RUN/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
    SystemdCgroup = false
TOML
  start containerd containerd --config containerd/config.toml
  wait_for containerd 30 ctr --address containerd/containerd.sock version
  local tar
  for tar in "$KUBE_IMAGES"/*.tar; do
    ctr --address containerd/containerd.sock -n k8s.io images import "$tar" >/dev/null
  done

  cat >kubelet/config.yaml <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
readOnlyPort: 0
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$KUBE_RUN/containerd/containerd.sock
clusterDNS: [$NODE_IP]
clusterDomain: cluster.local
resolvConf: $KUBE_RUN/resolv.conf
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $KUBE_RUN/pki/ca.crt}
authorization: {mode: Webhook}
evictionHard: {memory.available: 200Mi, nodefs.available: 2%, imagefs.available: 2%}
imageGCHighThresholdPercent: 100
serializeImagePulls: false
YAML
  echo "nameserver $NODE_IP" >resolv.conf
  start kubelet kubelet --config kubelet/config.yaml --kubeconfig admin.kubeconfig --root-dir "$KUBE_RUN/kubelet" \
    --hostname-override "$NODE_NAME" --node-ip "$NODE_IP"

  cat >kube-proxy.yaml <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $KUBE_RUN/admin.kubeconfig}
hostnameOverride: $NODE_NAME
mode: iptables
clusterCIDR: 10.244.0.0/16
nodePortAddresses: [$NODE_IP/32]
conntrack: {maxPerCore: 0}
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
YAML
  start kube-proxy kube-proxy --config kube-proxy.yaml

  cat >Corefile <<DNS
.:53 {
  bind $NODE_IP
  ready 127.0.0.1:18181
  health 127.0.0.1:18080
  errors
  cache 5
  kubernetes cluster.local in-addr.arpa ip6.arpa {
    kubeconfig $KUBE_RUN/admin.kubeconfig taskplans-kube
    pods insecure
  }
}
DNS
  start coredns coredns -conf Corefile
}

# NetworkPolicy: kube-router's firewall only (the bridge plugin keeps pod networking, kube-proxy the
# Services). It needs the node's object, so it starts once the node registered.
start_network_policy() {
  start kube-router kube-router --kubeconfig admin.kubeconfig --hostname-override "$NODE_NAME" \
    --run-firewall=true --run-router=false --run-service-proxy=false --enable-cni=false \
    --health-port 20244 --metrics-port 0
  wait_for kube-router 60 curl -fsS http://127.0.0.1:20244/healthz
}

main() {
  log "saving host state into $KUBE_RUN/host-state"
  save_host_state
  make_pki
  make_network
  log "starting etcd and the control plane"
  start_control_plane
  log "starting containerd (importing $(ls "$KUBE_IMAGES"/*.tar | wc -l) images), the kubelet, kube-proxy, CoreDNS and kube-router"
  start_node
  wait_for "the node to be Ready" 120 kubectl wait --for=condition=Ready "node/$NODE_NAME" --timeout=2s
  wait_for CoreDNS 30 curl -fsS http://127.0.0.1:18181/ready
  start_network_policy
  kubectl label --overwrite "node/$NODE_NAME" topology.kubernetes.io/zone=local >/dev/null
  log "cluster up: $(kubectl version -o json | sed -n 's/.*"gitVersion": "\(v[^"]*\)".*/\1/p' | tail -1), node $NODE_NAME Ready"
}

main "$@"; exit # on one line: bash reads a script while running it
