#!/usr/bin/env bash
# `npm run test:kube`: the chart on a real single-node Kubernetes cluster. Builds what is missing
# (cached: cold about 25 minutes on two cores, warm seconds), brings the cluster up, runs the
# scenarios in test/kube, and tears everything down again, also when a scenario fails.
# Needs root (a kubelet); never run it beside `npm test` (docs/testing.md says why).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/kube/lib.sh
trap 'echo "npm run test:kube: failed at line $LINENO of scripts/kube/test.sh (the components'"'"' logs: $KUBE_CACHE/logs-last-run)" >&2' ERR

# What the scenarios themselves run on the machine: Node dependencies and helm.
node scripts/node-modules-current.mjs || JOBS=max npm ci --no-audit --no-fund
ensure_helm

started=$SECONDS
bash scripts/kube/build.sh
log "build done in $((SECONDS - started)) s"
host_snapshot >"$KUBE_CACHE/host-before"
teardown() {
  local code=$?
  bash scripts/kube/down.sh
  if ! diff -u "$KUBE_CACHE/host-before" <(host_snapshot) >&2; then
    echo "the teardown left the host changed (diff above: before up.sh, after down.sh)" >&2
    code=1
  fi
  exit $code
}
trap teardown EXIT
started=$SECONDS
bash scripts/kube/up.sh
log "cluster up in $((SECONDS - started)) s"
npx jest --config test/kube/jest.config.js --runInBand --ci "$@"
