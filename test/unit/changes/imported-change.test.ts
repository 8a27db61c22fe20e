import { PlanChangeKind } from "@taskplans/contract";
import { encodeWatchMessage } from "../../../src/grpc/encode/encode-change";
import {
  afterSnapshot,
  afterVersion,
  compareChangeKeys,
  importedWithoutPlanChange,
} from "../../../src/plans/changes/change-rows";
import { planEventsOf } from "../../../src/plans/pipeline/events";
import { FIXTURE_AT } from "../../harness/fixtures/records";

// Issue 54, defect 7 (follow-up): an import of a task without a plan records a change too, so that a
// watcher of the task it overwrites is told; the change says "no plan" and sits where a restarted
// watch reads it and a resumed one does not.
describe("the change of an import without a plan", () => {
  const change = importedWithoutPlanChange("t-1", { kind: "user", name: "ops" }, FIXTURE_AT);

  it("is keyed after the start of the history and before version 1", () => {
    expect(compareChangeKeys(change, { version: 0, step: 0 })).toBeGreaterThan(0);
    expect(compareChangeKeys(change, { version: 1, step: 0 })).toBeLessThan(0);
  });

  it("is not replayed to a watch from a snapshot of no plan, nor to one resumed after version 0", () => {
    expect(compareChangeKeys(change, afterSnapshot(null))).toBeLessThanOrEqual(0);
    expect(compareChangeKeys(change, afterVersion(0))).toBeLessThanOrEqual(0);
  });

  it("goes on the wire as PLAN_CHANGE_KIND_IMPORTED without a plan, with or without content", () => {
    for (const withContent of [true, false]) {
      const encoded = encodeWatchMessage(
        { kind: "change", change: { ...change, content: null } },
        withContent,
      );
      expect([encoded.kind, encoded.plan, encoded.author?.name]).toEqual([
        PlanChangeKind.PLAN_CHANGE_KIND_IMPORTED,
        undefined,
        "ops",
      ]);
    }
  });

  it("is a plan deleted for the event sink when it overwrote a task, nothing when it created one", () => {
    expect(planEventsOf({ kind: "import", created: false, change }).map((e) => e.type)).toEqual([
      "plan.deleted",
    ]);
    expect(planEventsOf({ kind: "import", created: true, change })).toEqual([]);
  });
});
