#!/usr/bin/env bash
# Prints the directory of a cached Python virtual environment holding exactly a requirements file
# (created on first use): `scripts/python-env.sh <name> <requirements file>`. Used by the client tests.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/toolchain.sh
ensure_venv "$1" "$2"
