#!/usr/bin/env bash
# The README's test command (`npm test`): prepares a fresh machine, then runs every check and test.
# Idempotent: installs are skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."

# 1. Server binaries (and the image's runtime tools) the integration tests start themselves (throwaway instances on free ports;
#    system services are never started or touched).
missing=()
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || missing+=(mariadb-server)
command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || missing+=(redis-server)
# `npm run test:galera` runs the service on a 3-node Galera cluster: Debian's galera-4 beside
# mariadb-server, and rsync, which its state transfers (SST, and IST's hand-over) run.
[ -f /usr/lib/galera/libgalera_smm.so ] || missing+=(galera-4)
command -v rsync >/dev/null 2>&1 || missing+=(rsync)
# The chart tests run the image's runtime tree: tini is its PID 1; pods get network namespaces (ip).
[ -x /usr/bin/tini ] || missing+=(tini)
command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] || missing+=(iproute2)
# The fault suite's partitions drop packets inside a replica's network namespace.
command -v iptables >/dev/null 2>&1 || [ -x /usr/sbin/iptables ] || missing+=(iptables)
# The alert rules are checked and unit-tested with promtool, and the dashboard and rules queried on a
# real Prometheus scraping replicas (Debian's prometheus package ships both; no service is started).
command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
# planctl's watch is driven in a tmux session, as a person runs it, while another process appends.
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
# The HTTP door is tested with the real curl, and docs/http.md's examples (curl | jq) are run as written.
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v jq >/dev/null 2>&1 || missing+=(jq)
# The plan console is tested in a real headless browser: Debian's Chromium, driven by playwright-core
# (which downloads no browser of its own).
[ -x /usr/bin/chromium ] || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "missing ${missing[*]}: run 'sudo apt-get install -y ${missing[*]}' (or this command as root)" >&2
    exit 1
  fi
fi

# 2. Go and Python: the client packages are generated and tested in them (clients/go, clients/python).
#    Go is not taken from apt (Debian's is older than the Go module needs); Python's venv module is.
source scripts/toolchain.sh
require_command go "Go 1.26 or newer, https://go.dev/doc/install"
require_command python3 "Python 3.9 or newer"
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
  else
    echo "python3 has no venv module: run 'sudo apt-get install -y python3-venv'" >&2
    exit 1
  fi
fi

# 2b. Java 17+ and Maven: the Java client package is built, installed and tested with them
#     (clients/java); its Maven dependencies download once into ~/.m2 (about 70 MB).
java_missing=()
command -v java >/dev/null 2>&1 || java_missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || java_missing+=(maven)
if [ ${#java_missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "installing ${java_missing[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${java_missing[@]}" >/dev/null
  else
    echo "missing ${java_missing[*]}: run 'sudo apt-get install -y ${java_missing[*]}'" >&2
    exit 1
  fi
fi

# 3. helm, for the chart tests, grpcurl, for the TLS test, and the reference clients nobody here
#    wrote (grpc-health-probe; connectconformance, Connect's conformance runner): built from source
#    with `go install` into the tool cache (about 2 minutes each, once per machine). Pinned tools for code generation
#    are installed there too (scripts/generate.sh), and Python environments for the client tests
#    (test/harness/packages/client-packages.ts).
ensure_helm
ensure_grpcurl
ensure_grpc_health_probe
ensure_connectconformance

# 4. Node dependencies, pinned by package-lock.json; installed only when node_modules does not hold
#    exactly what the lockfile pins (an `npm ci` from the README, or an earlier run, already did it;
#    better-sqlite3 compiles from source here, ~80 s).
if ! node scripts/node-modules-current.mjs; then
  JOBS=max npm ci --no-audit --no-fund
fi

# 5. Everything else: generated-code drift, types, lint, format, unit and integration tests.
exec bash scripts/check.sh
