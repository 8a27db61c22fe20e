#!/usr/bin/env bash
# `npm run check`: generate-drift (server and client packages), typecheck, lint (buf + eslint + the import
# gate: no circles in src/ or bench/, plans/ imports only inward, no relative import across workspaces),
# format check, the builds and all tests.
set -euo pipefail
cd "$(dirname "$0")/.."

# Everything `npm run generate` writes: the server's code and descriptors, and every client package's.
GENERATED=(generated clients/go/taskplans clients/python/src/taskplans/v1 helm/taskplans/slo-methods.yaml docs/slo.md)
fingerprint() { find "${GENERATED[@]}" -type f ! -name '*.pyc' -print0 | sort -z | xargs -0 sha256sum | sha256sum; }
before=$(fingerprint)
npm run -s generate
if [ "$before" != "$(fingerprint)" ]; then
  echo "generated code did not match proto/: 'npm run generate' changed it; commit the regenerated files" >&2
  git status --short -- "${GENERATED[@]}" 2>/dev/null || true
  exit 1
fi
echo "generated code (server and clients) matches proto/"

npm run -s typecheck
npm run -s lint # ends with `npm run imports`, the import gate (.dependency-cruiser.js)
npm run -s format:check
npm run -s build # the fault suite runs the built server as separate processes
npm run -s build:packages # the workspaces (contract, client, MCP server): the MCP tests run its bin, OTLP a client
npx tsc -p tsconfig.bench.json # the soak test runs the built soak (dist-bench/bench/soak/soak.js)
# The README's own commands, as it gives them: the unit tests (no I/O), then the integration tests.
npm run -s test:unit -- --ci --maxWorkers=2
# Each workspace's own tests (`npm test -w cli`, `-w mcp`, `-w clients/ts`), one Jest project each.
npm run -s test:packages -- --ci --maxWorkers=2
npm run -s test:integration -- --ci --maxWorkers=2
