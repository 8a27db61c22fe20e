#!/usr/bin/env bash
# Tears down the cluster up.sh started and puts the host back as it found it: workloads deleted
# through the API (so the CNI releases their addresses), then the kubelet, kube-proxy, CoreDNS, the
# control plane (apiserver before etcd) and containerd stopped by the PIDs up.sh recorded; left-over
# containers killed through containerd; iptables, sysctls, routes and the bridge restored; every
# directory the parts created removed. Safe to run twice, and after a half-finished up.sh.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
[ -d "$KUBE_RUN" ] || exit 0
cd "$KUBE_RUN"
CTR=(ctr --address "$KUBE_RUN/containerd/containerd.sock" -n k8s.io)

stop() { # name [seconds]: SIGTERM to the recorded PID, SIGKILL after the wait
  local f="pids/$1" pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null
    local end=$((SECONDS + ${2:-20}))
    while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null && log "$1 did not stop on SIGTERM: killed"
  fi
  rm -f "$f"
}

if [ -f pids/kube-apiserver ] && kubectl get --raw /readyz >/dev/null 2>&1; then
  log "deleting the workloads"
  for ns in $(kubectl get ns -o name | sed 's#namespace/##' | grep -vE '^(default|kube-system|kube-public|kube-node-lease)$'); do
    kubectl delete ns "$ns" --wait=false >/dev/null 2>&1
  done
  kubectl delete pods --all -n default --grace-period=1 >/dev/null 2>&1
  end=$((SECONDS + 60))
  while [ -n "$(kubectl get pods -A -o name 2>/dev/null)" ] && [ $SECONDS -lt $end ]; do sleep 1; done
fi
stop kubelet
stop kube-router
stop kube-proxy
stop coredns
stop kube-scheduler
stop kube-controller-manager
stop kube-apiserver 30
stop etcd
if [ -f pids/containerd ]; then
  # Whatever the kubelet did not stop: kill its tasks and remove its sandboxes through containerd.
  for id in $("${CTR[@]}" tasks ls -q 2>/dev/null); do "${CTR[@]}" tasks kill -s SIGKILL "$id" >/dev/null 2>&1; done
  sleep 1
  for id in $("${CTR[@]}" tasks ls -q 2>/dev/null); do "${CTR[@]}" tasks delete -f "$id" >/dev/null 2>&1; done
  stop containerd
fi

log "restoring the host"
if [ -d host-state ]; then
  # A table the save did not list held nothing: empty it (kube-proxy's nat chains live there).
  for cmd in iptables ip6tables; do
    [ -f "host-state/$cmd" ] || continue
    for table in filter nat mangle raw; do
      grep -qx "\*$table" "host-state/$cmd" || { "$cmd" -t "$table" -F 2>/dev/null; "$cmd" -t "$table" -X 2>/dev/null; }
    done
    "$cmd-restore" <"host-state/$cmd"
  done
  # kube-router's sets, once no rule refers to them (never one that existed before up.sh).
  if [ -f host-state/ipsets ]; then
    for set in $(comm -13 host-state/ipsets <(ipset list -n | sort)); do ipset destroy "$set" 2>/dev/null; done
  fi
  for f in host-state/sysctl.*; do
    [ -f "$f" ] && sysctl -qw "${f#host-state/sysctl.}=$(cat "$f")" 2>/dev/null
  done
  # Network namespaces the pods left behind (never one that existed before up.sh).
  for ns in $(comm -13 host-state/netns <(ip netns list | awk '{print $1}' | sort)); do
    ip netns delete "$ns" 2>/dev/null
  done
fi
ip route del 10.96.0.0/16 dev cni0 2>/dev/null
ip route del blackhole 10.244.0.0/16 2>/dev/null
ip link del cni0 2>/dev/null
# Mounts the kubelet and containerd left (pod volumes, shm, rootfs), deepest first.
awk -v run="$KUBE_RUN" '$2 ~ "^"run"/" || $2 ~ "^/run/netns/cni-" {print $2}' /proc/mounts | sort -r | while read -r m; do
  umount -l "$m" 2>/dev/null
done
for d in $KUBE_HOST_DIRS; do
  grep -qxF "$d" host-state/existing-dirs 2>/dev/null || rm -rf "$d"
done
# The components' logs outlive the cluster (what to read when a run failed).
rm -rf "$KUBE_CACHE/logs-last-run" && cp -r "$KUBE_RUN/logs" "$KUBE_CACHE/logs-last-run" 2>/dev/null
cd /
rm -rf "$KUBE_RUN"
log "torn down"
