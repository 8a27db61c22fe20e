import type { Caller } from "../auth/caller";
import type { HeadRecord } from "./ports/records";
import type { WriteResult } from "./writes/content-commit";
import {
  type ContentRequest,
  createCommand,
  editCommand,
  type EditRequest,
  saveCommand,
  updateCommand,
} from "./writes/content-request";
import {
  deletePlanCommand,
  restoreCommand,
  type RestoreRequest,
  revertCommand,
} from "./writes/history-request";
import type { RestoreResult } from "./writes/history-decision";
import type { RequestedAuthor } from "./rules/author";
import { markCommand, type MarkRequest } from "./writes/mark-started";
import { type WriteOptions, type WritePipeline, writeCall } from "./pipeline/write-pipeline";

export type { RestoreResult } from "./writes/history-decision";
export type { WriteResult } from "./writes/content-commit";

/**
 * Plan use cases. Each write is a typed command (content-request.ts, history-request.ts: the
 * request's checks, what it reads, a pure decision) that the one write pipeline runs; `options`
 * carry the caller's deadline (epoch ms), which bounds the lock wait, and where to report the bytes
 * the write stored (the caller's write budget).
 */
export class PlanService {
  constructor(private readonly pipeline: WritePipeline) {}

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
  markImplementationStarted(
    caller: Caller,
    request: MarkRequest,
    options: WriteOptions = {},
  ): Promise<HeadRecord> {
    return this.pipeline.execute(markCommand(caller, request), writeCall(caller, options));
  }
}
