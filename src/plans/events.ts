import type { ChangeRecord, HeadRecord, RevisionMeta } from "./ports/records";

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

/** Strips content from a HEAD for an event. */
export function summarize(
  head: PlanSummary & {
    content?: unknown;
    legacyContent?: unknown;
    trimmedChars?: unknown;
    trimmedBytes?: unknown;
  },
): PlanSummary {
  const {
    content: _content,
    legacyContent: _legacy,
    trimmedChars: _chars,
    trimmedBytes: _bytes,
    ...summary
  } = head;
  return summary;
}

/** Strips content from a revision for an event. */
export function revisionMeta(revision: RevisionMeta & { content?: string | null }): RevisionMeta {
  const { content: _content, ...meta } = revision;
  return meta;
}

/**
 * Told after every commit which change it recorded (null: a commit without a change of its own, such
 * as a task delete), so that watchers on every replica learn of it. Must not throw.
 */
export interface ChangeNotifier {
  changed(taskId: string, change: ChangeRecord | null): void;
}
