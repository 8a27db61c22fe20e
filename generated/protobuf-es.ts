/**
 * The protobuf-es descriptors of the same contract (generated/es, written by `npm run generate` from
 * proto/ with protoc-gen-es, never edited by hand): the HTTP listener's Connect and gRPC-Web
 * protocols are built on them (docs/decisions/0010-http-door-connect-node.md), and so are Connect
 * clients (`@connectrpc/connect-node`, `@connectrpc/connect-web`). Exported from the package root as
 * the `es` namespace: its message types share their names with the ts-proto ones.
 */
export * from "./es/taskplans/v1/plan_pb";
export * from "./es/taskplans/v1/plan_service_pb";
export * from "./es/taskplans/v1/task_pb";
export * from "./es/google/rpc/error_details_pb";
export * from "./es/google/rpc/status_pb";
