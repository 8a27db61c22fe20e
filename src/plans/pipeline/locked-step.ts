import type { Caller } from "../../auth/caller";
import type { PlanWriteTx } from "../ports/plan-store";
import type { LockLease } from "../ports/task-lock";
import type { ReadKind } from "../ports/records";
import { StorageConflictError } from "../ports/store-errors";
import { REQUEST_ID_RETENTION_MS } from "./idempotency";
import { planErrors } from "../errors";
import { checkHistoryBudget } from "./history-budget";
import { verifyReach } from "./reach";
import {
  type Committed,
  type Decision,
  type Unchanged,
  type WriteCommand,
  type WriteEnv,
  writeState,
} from "./write-command";

/** Who writes, the lease of their task's lock, and the inputs of the decision. */
export interface LockedCall {
  readonly caller: Caller;
  readonly lease: LockLease;
  /** Read once the task's rows are locked: the time is then after the previous write's commit. */
  readonly env: () => Omit<WriteEnv, "storedContent">;
}

/**
 * A write's work in its transaction, under its task's lock: the locking read the command declared,
 * reach on the locked task, a remembered answer, the decision on what was read, its commit (with the
 * request it answers; the change history yields to the decision's allowance there), and the history
 * budget on what the commit left. Returns the decision with the bytes its commit stored, or the
 * remembered answer; throws to roll the transaction back.
 */
export async function writeUnderLock<K extends ReadKind, R>(
  tx: PlanWriteTx,
  command: WriteCommand<K, R>,
  call: LockedCall,
): Promise<Committed<R> | Unchanged<R>> {
  const { taskId, request } = command;
  const what = {
    reads: command.reads,
    revisionId: command.revisionId,
    requestId: request?.storedId,
    contentAt: command.contentAt,
  };
  const locked = await tx.read(taskId, what);
  verifyReach(call.caller, taskId, locked?.state.task ?? null);
  if (locked === null) throw planErrors.taskNotFound(taskId);
  const { history, remembered } = locked.state;
  if (request && remembered) {
    // A retry of a remembered request returns the original result and writes nothing.
    if (remembered.fingerprint !== request.fingerprint) throw planErrors.requestIdReused(request.id);
    return { unchanged: remembered.result as R };
  }
  const state = writeState(taskId, locked.state);
  const { now, coalesceWindowMs, historyBudget, newId, checklist } = call.env();
  const storedContent = () => locked.storedContent();
  const env: WriteEnv = { now, coalesceWindowMs, historyBudget, newId, checklist, storedContent };
  let decided: Decision<R> | Unchanged<R>;
  try {
    decided = await command.decide(state, env, locked.state.target);
  } catch (error) {
    // A rejection of a write that never read the stored plan: one that cannot be read is reported first.
    if (command.readFailed && command.reads === "metadata" && state.live) await locked.verifyStoredContent();
    throw error;
  }
  if ("unchanged" in decided) return decided;
  const remember = request
    ? {
        request: {
          taskId,
          requestId: request.storedId,
          fingerprint: request.fingerprint,
          result: decided.result,
          createdAt: now,
        },
        forgetBefore: new Date(now.getTime() - REQUEST_ID_RETENTION_MS),
      }
    : null;
  const { usage, storedBytes } = await locked.commit(decided.commit, remember);
  // Only a content write is held to the budget: a delete always goes through (it is how a task recovers).
  if (decided.commit.kind === "content") checkHistoryBudget(env.historyBudget, history, usage);
  // The lease check is a courtesy; the fences (HEAD's version, the revision's row version) hold.
  if (call.lease.lost) throw new StorageConflictError("lock lease lost before commit");
  // Built field by field: a spread of the decision (whose shape varies by command) costs shape
  // transitions on every write.
  return { commit: decided.commit, result: decided.result, stored: decided.stored, storedBytes };
}
