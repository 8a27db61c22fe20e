/**
 * @taskplans/contract: the task-plan service's contract in TypeScript. The ts-proto messages and
 * grpc-js stubs generated from proto/ (`npm run generate`, never edited by hand), the google.rpc
 * error details the service sends, and the rich-status codec both the server and the clients use to
 * put those details into, and read them out of, a failed call's trailer.
 */
export * from "./ts/taskplans/v1/plan";
export * from "./ts/taskplans/v1/plan_service";
export * from "./ts/taskplans/v1/task";
export * from "./ts/google/rpc/error_details";
export * from "./ts/google/rpc/status";
export * from "./ts/google/protobuf/any";
export * from "./ts/google/protobuf/duration";
export * from "./ts/google/protobuf/timestamp";
export * from "./rich-status";
// The protobuf-es descriptors of the same contract (Connect and gRPC-Web): see protobuf-es.ts.
export * as es from "./protobuf-es";
// Every generated file declares these helpers; the contract's own file names them once.
export {
  protobufPackage,
  protobufFileName,
  type DeepPartial,
  type Exact,
  type MessageFns,
} from "./ts/taskplans/v1/plan";
