import { checkHistory, type TaskHistory } from "../../harness/jepsen/checker";
import type { OpRecord } from "../../harness/jepsen/history";
import { checkWatch } from "../../harness/jepsen/watch-check";
import type { PlanChange } from "@taskplans/contract";

const base = "# Plan\nstatus: 0\n";
const append = (id: number, outcome: OpRecord["outcome"], version?: number): OpRecord => ({
  id,
  taskId: "t",
  replica: 0,
  kind: "append",
  outcome,
  version,
  payload: { token: `tok-${id}` },
});

function task(revisions: string[], headVersion = revisions.length): TaskHistory {
  return {
    taskId: "t",
    head: { content: revisions.at(-1) ?? "", version: headVersion, latestRevisionNumber: revisions.length },
    revisions: revisions.map((content, i) => ({ number: i + 1, content })),
  };
}

const r1 = base;
const r2 = "# Plan\nstatus: 0\n\ntok-1";
const r3 = "# Plan\nstatus: 0\n\ntok-1\n\ntok-2";

describe("the fault-suite history checker can fail", () => {
  it("accepts a consistent history (acknowledged and unknown-but-applied appends)", () => {
    const summary = checkHistory([append(1, "ok", 2), append(2, "unknown")], [task([r1, r2, r3])]);
    expect(summary).toMatchObject({ ok: 1, unknown: 1, unknownApplied: 1, revisions: 3 });
  });
  it("rejects a lost acknowledged append", () => {
    expect(() => checkHistory([append(1, "ok", 2), append(2, "ok", 3)], [task([r1, r2])])).toThrow(
      /acknowledged version 3 not stored/,
    );
  });
  it("rejects a failed append that was applied", () => {
    expect(() => checkHistory([append(1, "failed"), append(2, "ok", 3)], [task([r1, r2, r3])])).toThrow(
      /explained by no/,
    );
  });
  it("rejects a duplicated append", () => {
    const dup = "# Plan\nstatus: 0\n\ntok-1\n\ntok-1";
    expect(() => checkHistory([append(1, "ok", 2), append(2, "unknown")], [task([r1, r2, dup])])).toThrow(
      /revision 3/,
    );
  });
  it("rejects a version gap and a HEAD that is not the last revision", () => {
    expect(() => checkHistory([append(1, "ok", 2)], [task([r1, r2], 3)])).toThrow(/HEAD version 3 != 2/);
  });
  it("rejects an acknowledged write whose revision holds something else (lost update)", () => {
    const lost = "# Plan\nstatus: 0\n\ntok-2";
    expect(() => checkHistory([append(1, "ok", 2), append(2, "ok", 3)], [task([r1, r2, lost])])).toThrow(
      /revision 3 is not op 2/,
    );
  });
});

describe("the fault suite's watch check", () => {
  const stored = task([r1, r2, r3]);
  const change = (version: number, content: string, revision = version) =>
    ({ plan: { version, content }, revision: { number: revision } }) as unknown as PlanChange;
  const acknowledged = [append(1, "ok", 2), append(2, "ok", 3), append(3, "failed")];

  it("accepts each committed version once, in order, with its revision's content", () => {
    expect(checkWatch([change(2, r2), change(3, r3)], stored, acknowledged, 1)).toBe(2);
  });

  it.each([
    ["a version missing", [change(3, r3)]],
    ["a version twice", [change(2, r2), change(2, r2), change(3, r3)]],
    ["versions out of order", [change(3, r3), change(2, r2)]],
    ["a version that never committed", [change(2, r2), change(3, r3), change(4, r3)]],
    ["content other than the revision's", [change(2, r3), change(3, r3)]],
    ["another revision", [change(2, r2, 3), change(3, r3)]],
  ])("rejects %s", (_what, received) => {
    expect(() => checkWatch(received, stored, acknowledged, 1)).toThrow();
  });

  it("rejects an acknowledged version that was never watched", () => {
    const extra = [...acknowledged, append(4, "ok", 7)];
    expect(() => checkWatch([change(2, r2), change(3, r3)], stored, extra, 1)).toThrow(/never watched/);
  });
});
