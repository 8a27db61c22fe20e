/**
 * @taskplans/client: the generated TypeScript client of the task-plan service (taskplans.v1), with a
 * promise-based wrapper taking partial requests, deadlines and safe retries by default, token
 * providers, a watch that resumes, and one typed error (clients/SDK.md).
 */
export * from "./client";
export * from "./errors";
export * from "./error-metadata";
export * from "./retry";
export * from "./watch";
// The contract (generated messages and stubs, error details, the rich-status codec), re-exported so
// a consumer needs one import.
export * from "@taskplans/contract";
