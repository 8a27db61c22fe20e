import { planErrors } from "./errors";

/** How an agent write composes the stored plan. */
export type WriteMode = "replace" | "append";

/**
 * Parses a mode exactly and case-sensitively (AC-TASKS-PLAN-APPEND-001.1 to 001.3): "" means
 * replace, "replace" and "append" mean themselves, anything else ("Append", "APPEND", an unknown
 * enum number) is INVALID_WRITE_MODE naming both accepted values. Never falls back to replace:
 * that is how a typo would overwrite a plan with a fragment.
 */
export function parseWriteMode(mode: string): WriteMode {
  if (mode === "" || mode === "replace") return "replace";
  if (mode === "append") return "append";
  throw planErrors.invalidWriteMode(JSON.stringify(mode));
}
