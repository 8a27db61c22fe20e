import { LockUnavailableError } from "./ports/task-lock";
import { StorageConflictError, StorageCorruptionError, StorageUnavailableError } from "./ports/store-errors";
import { PlanError, planErrors } from "./errors";

/**
 * Turns expected infrastructure failures into domain errors. Unknown errors pass through unchanged
 * and become INTERNAL at the edge (their text is logged, never sent).
 */
export function translateFailure(error: unknown, during: "write" | "read" = "write"): PlanError {
  if (error instanceof PlanError) return error;
  if (error instanceof LockUnavailableError) return planErrors.lockUnavailable();
  if (error instanceof StorageConflictError) return planErrors.writeConflict();
  if (error instanceof StorageUnavailableError) return planErrors.storageUnavailable();
  if (error instanceof StorageCorruptionError) return planErrors.planReadFailed(during, error);
  throw error;
}

/** Runs a read (or, with `during`, a write outside the write runner) and translates its expected failures. */
export async function translated<T>(read: () => Promise<T>, during: "write" | "read" = "read"): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw translateFailure(error, during);
  }
}
