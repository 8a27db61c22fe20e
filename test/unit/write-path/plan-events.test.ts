import { commitContent, wholeContent } from "../../../src/plans/writes/content-commit";
import { planEventsOf } from "../../../src/plans/pipeline/events";
import { decideDelete } from "../../../src/plans/writes/history-decision";
import { decideMark } from "../../../src/plans/writes/mark-started";
import type { PlanCommit } from "../../../src/plans/ports/records";
import { type WriteEnv, writeState } from "../../../src/plans/pipeline/write-command";
import { FIXTURE_AT, headRecord, revisionRecord, checklistEnv } from "../../harness/fixtures/records";

// kandev's events are derived from a commit (the one model of a change), in AC-TASKS-PLAN-APPEND-005.4's order.

const env: WriteEnv = {
  now: new Date(FIXTURE_AT.getTime() + 60_000),
  coalesceWindowMs: 0,
  historyBudget: { maxRevisions: 0, maxBytes: 0 },
  newId: () => "r2",
  ...checklistEnv,
};
const agent = { kind: "agent" as const, name: "bot" };
const locked = (content: string) => ({ ...headRecord(content), trimmedChars: 2, trimmedBytes: 2 });
const state = (live: boolean) =>
  writeState("t", {
    head: live ? locked("v1") : null,
    latest: live ? revisionRecord("v1") : null,
    history: { revisions: live ? 1 : 0, bytes: 0 },
  });
const content = (live: boolean, revertOf: string | null) =>
  commitContent(state(live), env, {
    title: undefined,
    content: wholeContent("v2"),
    author: agent,
    forceNewRevision: true,
    revertOfRevisionId: revertOf,
    truncation: null,
  }).then((decided) => decided.commit);
const commitOf = (decided: { commit: PlanCommit } | { unchanged: unknown }): PlanCommit => {
  if (!("commit" in decided)) throw new Error("no commit");
  return decided.commit;
};

describe("planEventsOf (kandev's events of a commit)", () => {
  it.each([
    ["a create", content(false, null), ["plan.created", "plan.revision.created"]],
    ["an update", content(true, null), ["plan.updated", "plan.revision.created"]],
    ["a revert", content(true, "r1"), ["plan.updated", "plan.revision.created", "plan.reverted"]],
    [
      "a revert of a deleted plan",
      content(false, "r1"),
      ["plan.created", "plan.revision.created", "plan.reverted"],
    ],
    ["a delete", commitOf(decideDelete(undefined, agent, state(true), env)), ["plan.deleted"]],
    [
      "the first implementation-started mark",
      commitOf(decideMark(state(true) as never, env, { by: "bot", sessionId: "s", author: agent })),
      ["plan.implementation-started"],
    ],
    [
      "a task delete with a plan",
      { kind: "delete-task", taskId: "t", plan: headRecord("v1") },
      ["plan.deleted"],
    ],
    ["a task delete without one", { kind: "delete-task", taskId: "t", plan: null }, []],
  ] as [string, PlanCommit | Promise<PlanCommit>, string[]][])("%s", async (_label, commit, types) => {
    expect(planEventsOf(await commit).map((event) => event.type)).toEqual(types);
  });

  it("reports the revision written and whether it coalesced, and a deleted plan at the version it had", async () => {
    const [, revision] = planEventsOf(await content(true, null));
    expect(revision).toMatchObject({
      type: "plan.revision.created",
      coalesced: false,
      revision: { id: "r2", number: 2 },
    });
    const [deleted] = planEventsOf(commitOf(decideDelete(undefined, agent, state(true), env)));
    expect(deleted).toMatchObject({ type: "plan.deleted", plan: { version: 1, title: "Plan" } });
  });

  it("leaves an already marked plan unchanged: no commit, so no event", () => {
    const marked = writeState("t", {
      head: { ...locked("v1"), implementationStartedAt: FIXTURE_AT },
      latest: revisionRecord("v1"),
      history: { revisions: 1, bytes: 0 },
    });
    expect(decideMark(marked as never, env, { by: "bot", sessionId: "s", author: agent })).toHaveProperty(
      "unchanged",
    );
  });
});
