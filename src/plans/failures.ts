import { LockUnavailableError } from "./ports/task-lock";
import { StorageConflictError, StorageCorruptionError, StorageUnavailableError } from "./ports/store-errors";
import { PlanError, planErrors } from "./errors";

/**
 * Turns expected infrastructure failures into domain errors. Unknown errors pass through unchanged
 * and become INTERNAL at the edge (their text is logged, never sent).
 */
export function translateFailure(error: unknown): PlanError {
  if (error instanceof PlanError) return error;
  if (error instanceof LockUnavailableError) return planErrors.lockUnavailable();
  if (error instanceof StorageConflictError) return planErrors.writeConflict();
  if (error instanceof StorageUnavailableError) return planErrors.storageUnavailable();
  if (error instanceof StorageCorruptionError) return planErrors.planReadFailed();
  throw error;
}

/** Runs a read and translates its expected failures. */
export async function translated<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw translateFailure(error);
  }
}
