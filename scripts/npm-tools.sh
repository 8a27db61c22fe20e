#!/usr/bin/env bash
# Prints the directory of a cached install of a pinned Node tool directory (scripts/tools/NAME, its
# package-lock.json installed with `npm ci` on first use): `scripts/npm-tools.sh <name>`. Used by the
# MCP conformance test (the suite and the Node 22 it needs, from the npm registry).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/toolchain.sh
ensure_npm_tools "$1"
