import type { Caller } from "../auth/caller";
import type { PlanStore } from "./ports/plan-store";
import type { ChangeRecord, HeadRecord, TaskRecord } from "./ports/records";
import { implementationStartedChange } from "./changes";
import type { WriteResult } from "./content-commit";
import {
  type ContentRequest,
  createCommand,
  editCommand,
  type EditRequest,
  saveCommand,
  updateCommand,
} from "./content-command";
import { planErrors } from "./errors";
import { summarize } from "./events";
import { deletePlanCommand, restoreCommand, type RestoreRequest, revertCommand } from "./history-command";
import type { RestoreResult } from "./history-write";
import type { RequestedAuthor } from "./author";
import { reachableTask } from "./reach";
import { checkDisplayName, requireId } from "./validate";
import { type WriteOptions, type WritePipeline, writeCall } from "./write-pipeline";

export type { RestoreResult } from "./history-write";
export type { WriteResult } from "./content-commit";

/**
 * Plan use cases. Each write is a typed command (content-command.ts, history-command.ts: the
 * request's checks, what it reads, a pure decision) that the one write pipeline runs; `options`
 * carry the caller's deadline (epoch ms), which bounds the lock wait, and where to report the bytes
 * the write stored (the caller's write budget).
 */
export class PlanService {
  constructor(
    private readonly store: PlanStore,
    private readonly pipeline: WritePipeline,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** Agent create (or conditional replace with expected_version). CreatePlan has no mode (AC-005.2). */
  createPlan(
    caller: Caller,
    request: ContentRequest & { readonly mode: string },
    options: WriteOptions = {},
  ): Promise<WriteResult> {
    return this.pipeline.execute(createCommand(caller, request), writeCall(caller, options));
  }

  /** Agent update in REPLACE or APPEND mode; never creates a plan. */
  updatePlan(
    caller: Caller,
    request: ContentRequest & { readonly mode: string },
    options: WriteOptions = {},
  ): Promise<WriteResult> {
    return this.pipeline.execute(updateCommand(caller, request), writeCall(caller, options));
  }

  /** Agent exact-text edit: replaces the one occurrence of oldText (see decideEdit). */
  editPlan(caller: Caller, request: EditRequest, options: WriteOptions = {}): Promise<WriteResult> {
    return this.pipeline.execute(editCommand(caller, request), writeCall(caller, options));
  }

  /** Agent restore of a revision, conditional on both versions (see decideRestore). */
  restoreRevision(
    caller: Caller,
    request: RestoreRequest,
    options: WriteOptions = {},
  ): Promise<RestoreResult> {
    return this.pipeline.execute(restoreCommand(caller, request), writeCall(caller, options));
  }

  /** Editor save: creates or replaces; no mode, no version, empty content allowed. */
  savePlan(caller: Caller, request: ContentRequest, options: WriteOptions = {}): Promise<WriteResult> {
    return this.pipeline.execute(saveCommand(caller, request), writeCall(caller, options));
  }

  /** Deletes the live plan; revisions are kept. */
  deletePlan(
    caller: Caller,
    request: { taskId: string; expectedVersion?: number | undefined },
    options: WriteOptions = {},
  ): Promise<void> {
    return this.pipeline.execute(deletePlanCommand(caller, request), writeCall(caller, options));
  }

  /** Editor revert: a new revision copying the target (see decideRevert). */
  revertPlan(
    caller: Caller,
    request: { taskId: string; revisionId: string; author?: RequestedAuthor | undefined },
    options: WriteOptions = {},
  ): Promise<WriteResult> {
    return this.pipeline.execute(revertCommand(caller, request), writeCall(caller, options));
  }

  /** Sets the implementation-started marker once (first mark wins); no revision, no version change. */
  async markImplementationStarted(
    caller: Caller,
    request: { taskId: string; sessionId: string; actor: string },
  ): Promise<HeadRecord> {
    await this.reach(caller, requireId("task_id", request.taskId));
    const sessionId = requireId("session_id", request.sessionId);
    const by =
      caller.authenticated && caller.name
        ? caller.name
        : checkDisplayName("actor", request.actor.trim()) || "user";
    const at = this.clock();
    const author = { kind: caller.authenticated && caller.kind ? caller.kind : ("user" as const), name: by };
    let recorded: ChangeRecord | null = null;
    const outcome = await this.store.markImplementationStarted(
      request.taskId,
      { at, by, sessionId },
      (marked) => {
        recorded = implementationStartedChange(summarize(marked), author, at);
        return recorded;
      },
    );
    if (outcome === null) throw planErrors.planNotFound(request.taskId);
    if (outcome.marked) {
      this.pipeline.publishCommitted(
        request.taskId,
        [{ type: "plan.implementation-started", plan: summarize(outcome.head) }],
        recorded,
      );
    }
    return outcome.head;
  }

  /**
   * The task, if the caller reaches it. Checked before existence: with auth on, a missing task is
   * reported exactly like an unreachable one, so nothing is disclosed.
   */
  private reach(caller: Caller, taskId: string): Promise<TaskRecord> {
    return reachableTask(this.store, caller, taskId);
  }
}
