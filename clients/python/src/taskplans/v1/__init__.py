"""Generated code of the proto package taskplans.v1 (scripts/generate.sh; do not edit the *_pb2 files)."""
