import type { ClientReadableStream, ServiceError } from "@grpc/grpc-js";
import { type PlanChange, PlanChangeKind, reasonOf } from "@taskplans/client";
import type { Clients } from "../../test/harness/calls/rpc";
import type { Findings } from "./findings";
import type { LatencyBook } from "./latency";
import type { SoakTask } from "./tasks";

const CANCELLED = 1;
const CONTENT_KINDS = new Set([
  PlanChangeKind.PLAN_CHANGE_KIND_CREATED,
  PlanChangeKind.PLAN_CHANGE_KIND_UPDATED,
  PlanChangeKind.PLAN_CHANGE_KIND_REVERTED,
]);

/**
 * One WatchPlan follower of a task. Checks that changes come in version order without gaps (an
 * implementation mark repeats its version), that content streams carry the content the soak wrote
 * at that version, and records commit-to-receipt delay. It resumes as the README says: after the last
 * version received, or from a fresh snapshot after WATCH_HISTORY_EXPIRED (the one allowed gap).
 */
export class SoakWatcher {
  lastVersion: number | null = null;
  received = 0;
  resumes = 0;
  expired = 0;
  private stream: ClientReadableStream<PlanChange> | null = null;
  private stopped = false;

  constructor(
    readonly task: SoakTask,
    private readonly client: Clients,
    readonly includeContent: boolean,
    private readonly book: LatencyBook,
    private readonly findings: Findings,
  ) {
    task.watched = true;
  }

  start(afterVersion: number | null = null): void {
    if (this.stopped) return;
    const stream = this.client.plans.watchPlan({
      taskId: this.task.id,
      includeContent: this.includeContent,
      ...(afterVersion === null ? {} : { afterVersion }),
    });
    this.stream = stream;
    stream.on("data", (change: PlanChange) => this.onChange(change));
    stream.on("error", (error: ServiceError) => this.onEnd(stream, error));
    stream.on("end", () => this.onEnd(stream, null));
  }

  stop(): void {
    this.stopped = true;
    this.stream?.cancel();
  }

  /** Waits until the watcher has seen `version` (or `limitMs` passed); true when it has. */
  async reached(version: number, limitMs: number): Promise<boolean> {
    const deadline = Date.now() + limitMs;
    while ((this.lastVersion ?? -1) < version) {
      if (Date.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return true;
  }

  private onChange(change: PlanChange): void {
    this.received++;
    const version = Number(change.plan?.version ?? 0);
    if (change.kind === PlanChangeKind.PLAN_CHANGE_KIND_SNAPSHOT) {
      this.lastVersion = change.plan ? version : null;
      return;
    }
    if (change.committedAt)
      this.book.record("WatchPlan delivery", Math.max(0, Date.now() - change.committedAt.getTime()));
    const last = this.lastVersion;
    const mark = change.kind === PlanChangeKind.PLAN_CHANGE_KIND_IMPLEMENTATION_STARTED;
    if (last !== null && !(version === last + 1 || (mark && version === last))) {
      this.findings.add(
        "watch-gap",
        `${this.task.id}: watcher got version ${version} (kind ${change.kind}) after ${last}`,
      );
    }
    if (this.includeContent && CONTENT_KINDS.has(change.kind) && this.task.soleWriter) {
      if (this.task.contentMatches(version, change.plan?.content ?? "") === false) {
        this.findings.add(
          "read-mismatch",
          `${this.task.id}: watched content of version ${version} differs from what was written`,
        );
      }
    }
    this.task.forgetUpTo(version);
    this.lastVersion = Math.max(last ?? 0, version);
  }

  private onEnd(stream: ClientReadableStream<PlanChange>, error: ServiceError | null): void {
    if (stream !== this.stream || this.stopped) return;
    this.stream = null;
    const reason = error ? reasonOf(error) : null;
    if (error?.code === CANCELLED && this.stopped) return;
    if (reason === "TASK_NOT_FOUND" && this.task.retired) return;
    if (reason === "WATCH_HISTORY_EXPIRED") {
      this.expired++;
      this.lastVersion = null; // a fresh snapshot: what was pruned in between is legitimately gone
      setTimeout(() => this.start(null), 100);
      return;
    }
    // Connection age, draining, a slow-client cut-off: resume after the last version received.
    const expected =
      reason === "WATCH_TOO_SLOW" || reason === "WATCH_DRAINING" || error === null || error.code === 14;
    if (!expected) {
      this.findings.add(
        "unexpected-error",
        `${this.task.id}: WatchPlan ended ${error?.code} ${reason ?? error?.details}`,
      );
    }
    this.resumes++;
    setTimeout(() => this.start(this.lastVersion), expected ? 100 : 500);
  }
}
