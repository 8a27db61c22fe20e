import type { ChangeRecord, HeadRecord, CommittedWrite, RevisionMeta } from "../ports/records";

/** What a plan event says about the plan (never its content, nor storage's trimmed lengths). */
export type PlanSummary = Omit<HeadRecord, "content" | "trimmedChars" | "trimmedBytes">;

/**
 * Events the service publishes after a write commits, in kandev's order: plan event, then revision
 * event; revert/restore: updated, revision.created (coalesced=false), reverted.
 */
export type PlanEvent =
  | { readonly type: "plan.created" | "plan.updated" | "plan.deleted"; readonly plan: PlanSummary }
  | { readonly type: "plan.revision.created"; readonly revision: RevisionMeta; readonly coalesced: boolean }
  | { readonly type: "plan.reverted"; readonly revision: RevisionMeta }
  | { readonly type: "plan.implementation-started"; readonly plan: PlanSummary };

/**
 * Receives committed events (also called, with no events, after a commit that changed no plan, such
 * as a task delete). Must not throw; publishing never fails a write that committed.
 */
export interface EventSink {
  publish(taskId: string, events: readonly PlanEvent[]): void;
}

// The two functions below name every field they keep rather than spreading the rest: on every
// write, and V8 (Node 20) builds an object from a rest or a spread with more fields many times slower.

/** Strips content from a HEAD for an event. */
export function summarize(head: PlanSummary): PlanSummary {
  return {
    taskId: head.taskId,
    title: head.title,
    contentBytes: head.contentBytes,
    contentChars: head.contentChars,
    version: head.version,
    createdBy: head.createdBy,
    createdAt: head.createdAt,
    updatedAt: head.updatedAt,
    latestRevisionNumber: head.latestRevisionNumber,
    deleted: head.deleted,
    implementationStartedAt: head.implementationStartedAt,
    implementationStartedBy: head.implementationStartedBy,
    implementationStartedSessionId: head.implementationStartedSessionId,
    checklist: head.checklist,
  };
}

/** Strips content from a revision for an event. */
export function revisionMeta(revision: RevisionMeta): RevisionMeta {
  return {
    id: revision.id,
    taskId: revision.taskId,
    number: revision.number,
    title: revision.title,
    contentBytes: revision.contentBytes,
    contentChars: revision.contentChars,
    authorKind: revision.authorKind,
    authorName: revision.authorName,
    revertOfRevisionId: revision.revertOfRevisionId,
    createdAt: revision.createdAt,
    updatedAt: revision.updatedAt,
    rowVersion: revision.rowVersion,
  };
}

/**
 * Told after every commit which change it recorded (null: a commit without a change of its own, such
 * as a task delete), so that watchers on every replica learn of it. Must not throw.
 */
export interface ChangeNotifier {
  changed(taskId: string, change: ChangeRecord | null): void;
}

/**
 * Told of every write that committed, once it is durable (never of a rolled-back write, nor of one
 * that changed nothing): the pipeline's post-commit work (change notification, pruning, events).
 * Must not throw; a listener that does is logged and never fails the write.
 */
export interface CommitListener {
  committed(taskId: string, commit: CommittedWrite): void;
}

/**
 * kandev's events of a commit, in AC-TASKS-PLAN-APPEND-005.4's order, derived from the commit (the
 * one model of a change): plan event, then revision event; a revert adds plan.reverted. A deleted
 * plan is reported at the version it had.
 */
export function planEventsOf(commit: CommittedWrite): PlanEvent[] {
  switch (commit.kind) {
    case "content": {
      const { change, revision } = commit;
      const events: PlanEvent[] = [
        { type: commit.created ? "plan.created" : "plan.updated", plan: change.plan },
        {
          type: "plan.revision.created",
          revision: revisionMeta(revision),
          coalesced: commit.coalesces !== null,
        },
      ];
      if (change.kind === "reverted")
        events.push({ type: "plan.reverted", revision: revisionMeta(revision) });
      return events;
    }
    case "delete":
      return [{ type: "plan.deleted", plan: { ...commit.change.plan, version: commit.fenceVersion } }];
    case "mark":
      return [{ type: "plan.implementation-started", plan: commit.change.plan }];
    case "delete-task":
      return commit.plan === null ? [] : [{ type: "plan.deleted", plan: commit.plan }];
    case "import":
      // A whole task written at once: reported as the plan it left (created when none was stored);
      // one that left no plan over a stored task, as a plan deleted.
      if (commit.change === null) return [];
      if (commit.change.plan.deleted)
        return commit.created ? [] : [{ type: "plan.deleted", plan: commit.change.plan }];
      return [{ type: commit.created ? "plan.created" : "plan.updated", plan: commit.change.plan }];
  }
}

/** The listener that publishes each commit's events to `sink`. */
export function eventsListener(sink: EventSink): CommitListener {
  return { committed: (taskId, commit) => sink.publish(taskId, planEventsOf(commit)) };
}

/** The listener that tells `notifier` the change each commit recorded (none for a task delete). */
export function changesListener(notifier: ChangeNotifier): CommitListener {
  return {
    committed: (taskId, commit) => notifier.changed(taskId, "change" in commit ? commit.change : null),
  };
}
