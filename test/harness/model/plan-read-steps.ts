import { randomUUID } from "node:crypto";
import { PlanChangeKind } from "@taskplans/contract";
import {
  type Sut,
  Divergence,
  attempt,
  expectEqual,
  expectOutcome,
  recordToken,
  wireKind,
} from "./plan-checks";
import type { PlanModel } from "./plan-model";
import { type VersionChoice, pick, resolveVersion } from "./plan-step-choices";
import { codePoints, utf8Bytes } from "./plan-text-rules";
import { Step } from "./plan-write-steps";
import { Watcher } from "../calls/watcher";

/** The read steps of the differential test: partial reads, one revision, and a WatchPlan replay. */

/** Where a partial read starts: a generated position, the end, one past the end, or not given. */
export type OffsetChoice =
  | { readonly kind: "at"; readonly at: number }
  | { readonly kind: "end" }
  | { readonly kind: "past" }
  | { readonly kind: "absent" };

export class ReadStep extends Step {
  constructor(
    readonly offset: OffsetChoice,
    readonly limit: number | undefined,
    readonly version: VersionChoice,
  ) {
    super();
  }

  async run(model: PlanModel, sut: Sut): Promise<void> {
    const length = codePoints(model.head?.content ?? "");
    const o = this.offset;
    const offset =
      o.kind === "absent"
        ? undefined
        : o.kind === "end"
          ? length
          : o.kind === "past"
            ? length + 1
            : o.at % (length + 1);
    const expectedVersion = resolveVersion(this.version, model);
    const decision = model.read({ offset: offset ?? 0, limit: this.limit, expectedVersion });
    const result = await attempt(
      sut.plans.getPlan({ taskId: sut.taskId, offset, limit: this.limit, expectedVersion }),
    );
    const step = `${this.toString()} [offset ${offset}]`;
    expectOutcome(step, decision, result);
    if (!decision.ok || !result.ok) return;
    const got = result.value;
    expectEqual(step, "range content", decision.content, got.plan?.content ?? "");
    expectEqual(
      step,
      "range [has_more, next_offset, total_chars, total_bytes, version]",
      [
        decision.hasMore,
        decision.nextOffset ?? null,
        decision.totalChars,
        decision.totalBytes,
        model.version,
      ],
      [got.hasMore, got.nextOffset ?? null, got.totalChars, got.totalBytes, got.plan?.version],
    );
  }

  toString(): string {
    const offset = this.offset.kind === "at" ? `${this.offset.at}` : this.offset.kind;
    return `read(offset=${offset}, limit=${this.limit ?? "absent"}, version=${this.version})`;
  }
}

/** GetPlanRevision of a picked revision (or an unknown id): content exactly, metadata, token. */
export class RevisionStep extends Step {
  constructor(readonly at: number | null) {
    super();
  }

  async run(model: PlanModel, sut: Sut): Promise<void> {
    const step = this.toString();
    const index = this.at === null ? null : pick(this.at, model.revisions.length);
    const expected = index === null ? undefined : model.revisions[index];
    const result = await attempt(
      sut.plans.getPlanRevision({ taskId: sut.taskId, revisionId: expected?.id ?? randomUUID() }),
    );
    expectOutcome(
      step,
      expected ? { ok: true } : { ok: false, accepted: [{ reason: "REVISION_NOT_FOUND" }] },
      result,
    );
    if (!expected || !result.ok) return;
    const got = result.value.revision;
    expectEqual(step, `revision ${expected.number} content`, expected.content, got?.content ?? "");
    const revertOf = expected.revertOf === null ? null : (model.revision(expected.revertOf)?.id ?? "?");
    expectEqual(
      step,
      `revision ${expected.number} [number, title, bytes, chars, author kind, author name, revert of]`,
      [
        expected.number,
        expected.title,
        utf8Bytes(expected.content),
        codePoints(expected.content),
        wireKind(expected.author),
        expected.author.name,
        revertOf,
      ],
      [
        got?.revisionNumber,
        got?.title,
        got?.contentBytes,
        got?.contentChars,
        got?.authorKind,
        got?.authorName,
        got?.revertOfRevisionId ?? null,
      ],
    );
    recordToken(step, model, sut, expected.number, got?.revisionVersion ?? "");
  }

  toString(): string {
    return `getRevision(${this.at === null ? "<unknown revision>" : `<revision pick ${this.at}>`})`;
  }
}

const KINDS: Record<string, PlanChangeKind> = {
  CREATED: PlanChangeKind.PLAN_CHANGE_KIND_CREATED,
  UPDATED: PlanChangeKind.PLAN_CHANGE_KIND_UPDATED,
  REVERTED: PlanChangeKind.PLAN_CHANGE_KIND_REVERTED,
  DELETED: PlanChangeKind.PLAN_CHANGE_KIND_DELETED,
};

/**
 * WatchPlan with after_version = an earlier version and include_content: the replay must be one
 * change per version after it, each with the content that version had (README "Watching a plan").
 * `ahead` resumes after a version that does not exist yet: WATCH_HISTORY_EXPIRED.
 */
export class WatchStep extends Step {
  constructor(
    readonly at: number,
    readonly ahead: boolean,
  ) {
    super();
  }

  async run(model: PlanModel, sut: Sut): Promise<void> {
    if (model.version === 0 && !this.ahead) return; // nothing to replay yet
    const afterVersion = this.ahead ? model.version + 1 : this.at % model.version;
    const step = `${this.toString()} [after_version ${afterVersion}]`;
    const watcher = new Watcher(
      sut.plans.watchPlan({ taskId: sut.taskId, afterVersion, includeContent: true }),
    );
    try {
      if (this.ahead) {
        const end = await watcher.ended();
        return expectEqual(
          step,
          "resume ahead of the plan",
          [11, "WATCH_HISTORY_EXPIRED"],
          [end.code, end.reason],
        );
      }
      const expected = model.changes.filter((c) => c.version > afterVersion);
      const received = await watcher.received(expected.length).catch((error: Error) => {
        throw new Divergence(`${step}: ${error.message}`);
      });
      for (const [i, change] of expected.entries()) {
        const got = received[i];
        expectEqual(step, `change ${i} version`, change.version, got?.plan?.version);
        if (!change.kinds.some((k) => KINDS[k] === got?.kind)) {
          throw new Divergence(
            `${step}: change of version ${change.version} is kind ${got?.kind}, expected ${change.kinds.join(" or ")}`,
          );
        }
        expectEqual(
          step,
          `content of the change of version ${change.version}`,
          change.content,
          got?.plan?.content ?? "",
        );
        const revision = got?.revision
          ? [got.revision.number, got.revision.id, got.revision.coalesced]
          : null;
        expectEqual(
          step,
          `revision of the change of version ${change.version}`,
          change.revision ? [change.revision.number, change.revision.id, change.revision.coalesced] : null,
          revision,
        );
      }
      const phantom = watcher.changes.find((c) => (c.plan?.version ?? 0) > model.version);
      if (phantom)
        throw new Divergence(`${step}: a change of version ${phantom.plan?.version} that no write made`);
    } finally {
      watcher.cancel();
    }
  }

  toString(): string {
    return `watch(${this.ahead ? "after a version ahead of the plan" : `after version pick ${this.at}`})`;
  }
}
