import { status } from "@grpc/grpc-js";
import { TaskPlansError } from "@taskplans/client";

/** planctl's exit codes (docs/planctl.md, "Exit codes"): scripts branch on them. */
export const EXIT = Object.freeze({
  /** The command did what it says. */
  ok: 0,
  /** The service refused (a rejection with a reason: VERSION_MISMATCH, PLAN_NOT_FOUND, ...). */
  refused: 1,
  /** The command line was wrong (unknown option, missing argument, unreadable file, bad context). */
  usage: 2,
  /** The service could not be reached, or did not answer in time, after the client's retries. */
  unavailable: 3,
});

/** A mistake in the command line or its inputs, found before or instead of a call: exit 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** A refusal this program decides itself (a damaged export file, tasks not imported): exit 1 with its reason. */
export class Refusal extends Error {
  override readonly name = "Refusal";
  constructor(
    readonly reason: string,
    message: string,
    readonly nextAction: string,
  ) {
    super(message);
  }
}

/** How a failed command is reported: its exit code and the fields printed on stderr. */
export interface Failure {
  readonly exitCode: number;
  /** gRPC status name ("ABORTED"), "USAGE", or "LOCAL" for a failure of this machine. */
  readonly code: string;
  /** ErrorInfo.reason ("VERSION_MISMATCH"), "" when there is none. */
  readonly reason: string;
  readonly message: string;
  readonly nextAction: string;
  readonly metadata: Readonly<Record<string, string>>;
}

const UNAVAILABLE: readonly number[] = [status.UNAVAILABLE, status.DEADLINE_EXCEEDED];

/** Classifies anything a command threw. Only a TaskPlansError's own fields reach the user. */
export function failureOf(error: unknown): Failure {
  if (error instanceof TaskPlansError) {
    return {
      exitCode: UNAVAILABLE.includes(error.code) ? EXIT.unavailable : EXIT.refused,
      code: error.codeName,
      reason: error.reason,
      message: error.details,
      nextAction: error.nextAction,
      metadata: { ...(error.errorInfo?.metadata ?? {}) },
    };
  }
  const local = (exitCode: number, code: string, message: string): Failure => ({
    exitCode,
    code,
    reason: "",
    message,
    nextAction: "",
    metadata: {},
  });
  if (error instanceof UsageError) return local(EXIT.usage, "USAGE", error.message);
  if (error instanceof Refusal)
    return {
      ...local(EXIT.refused, "LOCAL", error.message),
      reason: error.reason,
      nextAction: error.nextAction,
    };
  // A file that cannot be read or written is the command line's mistake (a path), not the service's.
  const errno = (error as NodeJS.ErrnoException | null)?.code;
  if (typeof errno === "string" && /^E[A-Z]+$/.test(errno))
    return local(EXIT.usage, "USAGE", (error as Error).message);
  return local(EXIT.refused, "LOCAL", error instanceof Error ? error.message : String(error));
}
