import { planErrors } from "../errors";

/**
 * A replacement (replace, exact edit, restore) of an existing plan must present the version the
 * caller read (seed 003): absent is VERSION_REQUIRED, different is VERSION_MISMATCH. Neither error
 * hands out the current version; the caller reads the plan again.
 */
export function requireCurrentVersion(
  live: { readonly version: number },
  expected: number | undefined,
): void {
  if (expected === undefined) throw planErrors.versionRequired();
  if (expected !== live.version) throw planErrors.versionMismatch();
}
