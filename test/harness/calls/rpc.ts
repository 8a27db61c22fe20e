import {
  createClient,
  type PlanApi,
  statusDetailsOf,
  type TaskApi,
  type TaskPlansClient,
} from "@taskplans/client";

/** The client package's promise API of both services (what every integration test calls). */
export type Clients = TaskPlansClient;
export type { PlanApi, TaskApi };

/**
 * Connects the client package (clients/ts) to host:port, so every run exercises it; `token` is sent
 * as a bearer token on every call. No default deadline and no retries: tests see each answer as the
 * server gave it, and those that want a deadline pass it per call.
 */
export function connect(port: number, token?: string, host = "127.0.0.1"): Clients {
  return createClient(`${host}:${port}`, { token, defaultTimeoutMs: 0, retry: false });
}

/** What a failed call carried: code, message and the rich error details. */
export interface RpcFailure {
  readonly code: number;
  readonly message: string;
  readonly reason: string;
  readonly domain: string;
  readonly metadata: Record<string, string>;
  readonly fieldViolations: readonly { field: string; description: string }[];
}

/** Awaits a call that must fail and returns its decoded error; fails the test if it succeeded. */
export async function rpcError(call: Promise<unknown>): Promise<RpcFailure> {
  let response: unknown;
  try {
    response = await call;
  } catch (error) {
    const { code, details } = error as { code: number; details: string };
    const rich = statusDetailsOf(error);
    return {
      code,
      message: details,
      reason: rich?.errorInfo?.reason ?? "",
      domain: rich?.errorInfo?.domain ?? "",
      metadata: rich?.errorInfo?.metadata ?? {},
      fieldViolations: rich?.badRequest?.fieldViolations ?? [],
    };
  }
  throw new Error(`expected the call to fail, it returned ${JSON.stringify(response)}`);
}
