#!/usr/bin/env bash
# `npm run generate`: the one generation command. Regenerates, from proto/, the TypeScript of the
# server and of the client package (generated/ts, one tree), the descriptor sets
# (generated/descriptors), the other client packages' generated code (clients/go/taskplans/v1,
# clients/python/src/taskplans/v1), and what the rpc_kind option says of each RPC
# (generated/rpc-kinds.ts, helm/taskplans/slo-methods.yaml, the table of docs/slo.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
source scripts/toolchain.sh
ensure_codegen_tools

# TypeScript (server and client package; buf cleans the output directory first).
buf generate

# Go: messages and service stubs only; google.rpc types come from google.golang.org/genproto.
rm -f clients/go/taskplans/v1/*.pb.go
buf generate --template buf.gen.go.yaml

# Python: messages and service stubs, with type stubs (.pyi) for both from mypy-protobuf; google.rpc
# comes from googleapis-common-protos.
py_out=clients/python/src
rm -f "$py_out"/taskplans/v1/*_pb2*.py "$py_out"/taskplans/v1/*_pb2*.pyi
"$CODEGEN_VENV/bin/python" -m grpc_tools.protoc -I proto \
  --plugin=protoc-gen-mypy="$CODEGEN_VENV/bin/protoc-gen-mypy" \
  --plugin=protoc-gen-mypy_grpc="$CODEGEN_VENV/bin/protoc-gen-mypy_grpc" \
  --python_out="$py_out" --mypy_out="$py_out" --grpc_python_out="$py_out" --mypy_grpc_out="$py_out" \
  proto/taskplans/v1/*.proto

# Descriptor sets the server serves through reflection and checks requests against.
buf build -o generated/descriptors/taskplans.binpb
# What each RPC is (its rpc_kind option): the server's edge tables, the TypeScript client's retry
# table, the chart's SLO methods and docs/slo.md's table of calls (scripts/generate-rpc-kinds.mjs).
node scripts/generate-rpc-kinds.mjs
prettier --write --log-level warn generated/rpc-kinds.ts docs/slo.md
buf build node_modules/grpc-health-check/proto -o generated/descriptors/health.binpb
buf build node_modules/google-proto-files --path node_modules/google-proto-files/google/rpc/status.proto \
  --path node_modules/google-proto-files/google/rpc/error_details.proto -o generated/descriptors/google-rpc.binpb
