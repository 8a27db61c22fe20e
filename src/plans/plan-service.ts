import type { Caller } from "../auth/caller";
import type { PlanStore } from "./ports/plan-store";
import type { ChangeRecord, HeadRecord, TaskRecord } from "./ports/records";
import { type RequestedAuthor, resolveAuthor } from "./author";
import { implementationStartedChange } from "./changes";
import { type ContentRequest, contentRequestKey, validateContentWrite } from "./content-request";
import { type ContentWrite, contentDecider, decideEdit } from "./content-write";
import { planErrors } from "./errors";
import { summarize } from "./events";
import { requestIdOwner, requestKey } from "./idempotency";
import { decideDelete, decideRestore, decideRevert, type RestoreResult } from "./history-write";
import { reachableTask, TaskWorkspaces, verifyReach } from "./reach";
import { checkDisplayName, requireId } from "./validate";
import type { WriteResult } from "./write-context";
import { parseWriteMode, type WriteMode } from "./write-mode";
import type { WriteRunner } from "./write-runner";

export type { RestoreResult } from "./history-write";
export type { WriteResult } from "./write-context";

/**
 * Plan use cases: authorize -> validate -> (writes) lock -> transaction -> rules -> commit -> events.
 * Rules live in pure functions (content-write, history-write, compose, ...); this class orders them.
 */
export class PlanService {
  private readonly taskWorkspaces = new TaskWorkspaces();

  constructor(
    private readonly store: PlanStore,
    private readonly writes: WriteRunner,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** Agent create (or conditional replace with expected_version). CreatePlan has no mode (AC-005.2). */
  async createPlan(
    caller: Caller,
    request: ContentRequest & { readonly mode: string },
    deadline = Number.POSITIVE_INFINITY,
  ): Promise<WriteResult> {
    requireId("task_id", request.taskId);
    if (request.mode !== "") throw planErrors.createHasNoMode(JSON.stringify(request.mode));
    return this.writeContent(
      caller,
      request,
      { path: "agent-create", mode: "replace", authorKind: "agent" },
      deadline,
      "CreatePlan",
    );
  }

  /** Agent update in REPLACE or APPEND mode; never creates a plan. */
  async updatePlan(
    caller: Caller,
    request: ContentRequest & { readonly mode: string },
    deadline = Number.POSITIVE_INFINITY,
  ): Promise<WriteResult> {
    requireId("task_id", request.taskId);
    // AC-TASKS-PLAN-APPEND-001.7: mode validity comes first, before task reach.
    const mode = parseWriteMode(request.mode);
    return this.writeContent(
      caller,
      request,
      { path: "agent-update", mode, authorKind: "agent" },
      deadline,
      "UpdatePlan",
    );
  }

  /** Agent exact-text edit: replaces the one occurrence of oldText (see decideEdit). */
  async editPlan(
    caller: Caller,
    request: {
      taskId: string;
      expectedVersion?: number | undefined;
      oldText: string;
      newText: string;
      acknowledgeReduction: boolean;
      author?: RequestedAuthor | undefined;
      requestId?: string | undefined;
    },
    deadline = Number.POSITIVE_INFINITY,
  ): Promise<WriteResult> {
    await this.reachForWrite(caller, requireId("task_id", request.taskId));
    if (request.oldText === "") throw planErrors.editTextRequired();
    const { requestId, taskId: _taskId, ...payload } = request;
    const author = resolveAuthor(caller, request.author, "agent");
    const key = requestKey(requestId, requestIdOwner(caller, author), "EditPlan", payload);
    const write: ContentWrite = {
      path: "agent-edit",
      mode: "edit",
      oldText: request.oldText,
      title: undefined,
      content: request.newText,
      expectedVersion: request.expectedVersion,
      acknowledgeReduction: request.acknowledgeReduction,
      author,
    };
    return this.writes.run<WriteResult>({
      taskId: request.taskId,
      reads: "content",
      decide: (state, env) => decideEdit(write, state, env),
      request: key,
      reach: (task) => verifyReach(caller, request.taskId, task),
      deadline,
    });
  }

  /** Agent restore of a revision, conditional on both versions (see decideRestore). */
  async restoreRevision(
    caller: Caller,
    request: {
      taskId: string;
      revisionId: string;
      expectedVersion?: number | undefined;
      expectedRevisionVersion: string;
      author?: RequestedAuthor | undefined;
      requestId?: string | undefined;
    },
    deadline = Number.POSITIVE_INFINITY,
  ): Promise<RestoreResult> {
    await this.reachForWrite(caller, requireId("task_id", request.taskId));
    requireId("revision_id", request.revisionId);
    const author = resolveAuthor(caller, request.author, "agent");
    const { requestId, taskId: _taskId, ...payload } = request;
    const key = requestKey(requestId, requestIdOwner(caller, author), "RestorePlanRevision", payload);
    return this.writes.run<RestoreResult>({
      taskId: request.taskId,
      reads: "content",
      revisionId: request.revisionId,
      decide: (state, env, target) => decideRestore({ ...request, target, author }, state, env),
      request: key,
      reach: (task) => verifyReach(caller, request.taskId, task),
      deadline,
    });
  }

  /** Editor save: creates or replaces; no mode, no version, empty content allowed. */
  async savePlan(
    caller: Caller,
    request: ContentRequest,
    deadline = Number.POSITIVE_INFINITY,
  ): Promise<WriteResult> {
    requireId("task_id", request.taskId);
    return this.writeContent(
      caller,
      request,
      { path: "editor-save", mode: "replace", authorKind: "user" },
      deadline,
    );
  }

  /** Deletes the live plan; revisions are kept. */
  async deletePlan(
    caller: Caller,
    request: { taskId: string; expectedVersion?: number | undefined },
    deadline = Number.POSITIVE_INFINITY,
  ): Promise<void> {
    await this.reachForWrite(caller, requireId("task_id", request.taskId));
    const author = resolveAuthor(caller, undefined, "user");
    await this.writes.run<void>({
      taskId: request.taskId,
      // A delete needs neither text: it also clears a plan that cannot be read (runbook).
      reads: "metadata",
      decide: (state, env) => decideDelete(request.expectedVersion, author, state, env),
      reach: (task) => verifyReach(caller, request.taskId, task),
      deadline,
    });
  }

  /** Editor revert: a new revision copying the target (see decideRevert). */
  async revertPlan(
    caller: Caller,
    request: { taskId: string; revisionId: string; author?: RequestedAuthor | undefined },
    deadline = Number.POSITIVE_INFINITY,
  ): Promise<WriteResult> {
    await this.reachForWrite(caller, requireId("task_id", request.taskId));
    requireId("revision_id", request.revisionId);
    const author = resolveAuthor(caller, request.author, "user");
    return this.writes.run<WriteResult>({
      taskId: request.taskId,
      // The plan's own text is not needed, so a revert recovers a plan that cannot be read.
      reads: "metadata",
      revisionId: request.revisionId,
      decide: (state, env, target) => {
        if (target === null) throw planErrors.revisionNotFound(request.taskId, request.revisionId);
        return decideRevert(target, author, state, env);
      },
      reach: (task) => verifyReach(caller, request.taskId, task),
      deadline,
    });
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
      this.writes.publishCommitted(
        request.taskId,
        [{ type: "plan.implementation-started", plan: summarize(outcome.head) }],
        recorded,
      );
    }
    return outcome.head;
  }

  private async writeContent(
    caller: Caller,
    request: ContentRequest,
    how: { path: ContentWrite["path"]; mode: WriteMode; authorKind: "agent" | "user" },
    deadline: number,
    method?: "CreatePlan" | "UpdatePlan",
  ): Promise<WriteResult> {
    await this.reachForWrite(caller, request.taskId);
    const author = resolveAuthor(caller, request.author, how.authorKind);
    const key = method && contentRequestKey(method, request, how.mode, requestIdOwner(caller, author));
    const write = validateContentWrite(request, { path: how.path, mode: how.mode }, author);
    return this.writes.run<WriteResult>({
      ...contentDecider(write),
      taskId: request.taskId,
      readFailed: how.mode === "append" ? (cause) => planErrors.planReadFailed("append", cause) : undefined,
      request: key,
      reach: (task) => verifyReach(caller, request.taskId, task),
      deadline,
    });
  }

  /**
   * The task, if the caller reaches it. Checked before existence: with auth on, a missing task is
   * reported exactly like an unreachable one, so nothing is disclosed.
   */
  private reach(caller: Caller, taskId: string): Promise<TaskRecord> {
    return reachableTask(this.store, caller, taskId);
  }

  /** The early reach check of a write; verifyReach repeats it on the locked task row. */
  private reachForWrite(caller: Caller, taskId: string): Promise<void> {
    return this.taskWorkspaces.reachForWrite(this.store, caller, taskId);
  }
}
