import { PlanError } from "../../src/plans/errors";

/** Runs a pure rule: "ok", or the reason of the PlanError it threw (":field" appended for INVALID_FIELD). */
export function reasonOf(action: () => unknown, withField = false): string {
  try {
    action();
    return "ok";
  } catch (error) {
    if (!(error instanceof PlanError)) throw error;
    const field = error.fieldViolations[0]?.field;
    return withField && field ? `${error.reason}:${field}` : error.reason;
  }
}
