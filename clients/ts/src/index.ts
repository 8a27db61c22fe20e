/**
 * @taskplans/client: the generated TypeScript client of the task-plan service (taskplans.v1), with a
 * promise-based wrapper taking partial requests, deadlines and safe retries by default, token
 * providers, a watch that resumes, and one typed error (clients/SDK.md).
 */
export * from "./client";
export * from "./errors";
export * from "./retry";
export * from "./watch";
export * from "../../../generated/ts/taskplans/v1/plan";
export * from "../../../generated/ts/taskplans/v1/plan_service";
export * from "../../../generated/ts/taskplans/v1/task";
export {
  BadRequest,
  BadRequest_FieldViolation,
  ErrorInfo,
  RetryInfo,
} from "../../../generated/ts/google/rpc/error_details";
// Every generated file declares these; name the contract's own.
export {
  protobufPackage,
  protobufFileName,
  type DeepPartial,
  type Exact,
  type MessageFns,
} from "../../../generated/ts/taskplans/v1/plan";
