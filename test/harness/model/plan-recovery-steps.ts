import { randomUUID } from "node:crypto";
import { RestoreStatus } from "@taskplans/contract";
import {
  type Sut,
  Divergence,
  attempt,
  expectEqual,
  expectOutcome,
  expectState,
  expectWritten,
  recordToken,
  trace,
} from "./plan-checks";
import type { PlanModel } from "./plan-model";
import { type AuthorChoice, pick, resolveVersion } from "./plan-step-choices";
import { Step, runWrite } from "./plan-write-steps";

/** The recovery steps of the differential test: the agent's RestorePlanRevision, the editor's RevertPlan. */

/**
 * RestorePlanRevision of a picked revision with a fresh token (read just before), or, when one was
 * coalesced into since a token was seen, of such a revision with its stale token.
 */
export class RestoreStep extends Step {
  constructor(
    readonly at: number | null,
    readonly staleToken: boolean,
    readonly version: "current" | "stale",
    readonly author: AuthorChoice,
  ) {
    super();
  }

  async run(model: PlanModel, sut: Sut): Promise<void> {
    const step = this.toString();
    // A stale token: the newest token of an older state of a revision coalesced into since.
    const staleOf = (number: number, rowChanges: number) =>
      [...(sut.tokens.get(number) ?? new Map<number, string>())].filter(([seen]) => seen < rowChanges).pop();
    const stale = model.revisions.filter((r) => staleOf(r.number, r.rowChanges) !== undefined);
    const pool = this.staleToken && stale.length > 0 ? stale : model.revisions;
    const index = this.at === null ? null : pick(this.at, pool.length);
    const source = index === null ? undefined : pool[index];
    let token = "0".repeat(64);
    let tokenRowChanges = -1;
    const older = source && this.staleToken ? staleOf(source.number, source.rowChanges) : undefined;
    if (older) [tokenRowChanges, token] = older;
    else if (source) {
      const read = await attempt(sut.plans.getPlanRevision({ taskId: sut.taskId, revisionId: source.id }));
      if (!read.ok)
        throw new Divergence(`${step}: GetPlanRevision ${source.number} failed: ${read.failure.reason}`);
      token = read.value.revision?.revisionVersion ?? "";
      tokenRowChanges = source.rowChanges;
      recordToken(step, model, sut, source.number, token);
    }
    const expectedVersion = resolveVersion(this.version, model) ?? 0;
    const decision = model.restore({
      revisionNumber: source?.number ?? null,
      tokenRowChanges,
      expectedVersion,
      author: this.author.model,
    });
    const result = await attempt(
      sut.plans.restorePlanRevision({
        taskId: sut.taskId,
        revisionId: source?.id ?? randomUUID(),
        expectedVersion,
        expectedRevisionVersion: token,
        author: this.author.wire,
      }),
    );
    expectOutcome(step, decision, result);
    if (decision.ok && result.ok) {
      const answer = result.value;
      const knownIds = new Set(model.revisions.map((r) => r.id));
      model.commit(decision, answer.revision?.id ?? "");
      trace(`  status ${decision.alreadyCurrent ? "ALREADY_CURRENT" : "RESTORED"}`);
      if (decision.alreadyCurrent) {
        expectEqual(
          step,
          "ALREADY_CURRENT answer [status, version, revision]",
          [RestoreStatus.RESTORE_STATUS_ALREADY_CURRENT, model.version, null],
          [answer.status, answer.plan?.version, answer.revision ?? null],
        );
      } else {
        expectEqual(
          step,
          "restore status and prior revision",
          [RestoreStatus.RESTORE_STATUS_RESTORED, decision.priorRevisionNumber],
          [answer.status, answer.priorRevisionNumber],
        );
        expectWritten(step, model, decision, answer, knownIds);
      }
    }
    await expectState(step, model, sut);
  }

  toString(): string {
    const target = this.at === null ? "<unknown revision>" : `<revision pick ${this.at}>`;
    return `restore(${target}, token=${this.staleToken ? "stale" : "fresh"}, version=${this.version}, author=${this.author.label})`;
  }
}

export class RevertStep extends Step {
  constructor(
    readonly at: number | null,
    readonly author: AuthorChoice,
  ) {
    super();
  }

  async run(model: PlanModel, sut: Sut): Promise<void> {
    const index = this.at === null ? null : pick(this.at, model.revisions.length);
    const source = index === null ? undefined : model.revisions[index];
    const decision = model.revert({ revisionNumber: source?.number ?? null, author: this.author.model });
    const call = sut.plans.revertPlan({
      taskId: sut.taskId,
      revisionId: source?.id ?? randomUUID(),
      author: this.author.wire,
    });
    await runWrite(this.toString(), model, sut, decision, call);
  }

  toString(): string {
    return `revert(${this.at === null ? "<unknown revision>" : `<revision pick ${this.at}>`}, author=${this.author.label})`;
  }
}
