import { shouldCoalesce } from "../../../src/plans/rules/coalesce";
import type { RevisionRecord } from "../../../src/plans/ports/records";

const base: RevisionRecord = {
  id: "r1",
  taskId: "t",
  number: 3,
  title: "Plan",
  content: "x",
  contentBytes: 1,
  contentChars: 1,
  authorKind: "agent",
  authorName: "Agent",
  revertOfRevisionId: null,
  createdAt: new Date(0),
  updatedAt: new Date(1_000_000),
  rowVersion: 1,
};
const agent = { kind: "agent" as const, name: "Agent" };
const window = 300_000;
const at = (ms: number) => new Date(1_000_000 + ms);

describe("shouldCoalesce", () => {
  it("coalesces the same author kind and name within the window", () => {
    expect(
      shouldCoalesce({ latest: base, author: agent, now: at(299_999), windowMs: window, forceNew: false }),
    ).toBe(true);
  });
  it("measures the window strictly from the newest revision's updated_at", () => {
    expect(
      shouldCoalesce({ latest: base, author: agent, now: at(300_000), windowMs: window, forceNew: false }),
    ).toBe(false);
  });
  it("never coalesces with a window of 0", () => {
    expect(shouldCoalesce({ latest: base, author: agent, now: at(0), windowMs: 0, forceNew: false })).toBe(
      false,
    );
  });
  it("never coalesces when forced (first write, acknowledged reduction, revert)", () => {
    expect(
      shouldCoalesce({ latest: base, author: agent, now: at(1), windowMs: window, forceNew: true }),
    ).toBe(false);
  });
  it("never coalesces without a newest revision", () => {
    expect(
      shouldCoalesce({ latest: null, author: agent, now: at(1), windowMs: window, forceNew: false }),
    ).toBe(false);
  });
  it("never coalesces onto a revert or restore marker", () => {
    const marker = { ...base, revertOfRevisionId: "r0" };
    expect(
      shouldCoalesce({ latest: marker, author: agent, now: at(1), windowMs: window, forceNew: false }),
    ).toBe(false);
  });
  it("requires the same author kind", () => {
    const user = { kind: "user" as const, name: "Agent" };
    expect(
      shouldCoalesce({ latest: base, author: user, now: at(1), windowMs: window, forceNew: false }),
    ).toBe(false);
  });
  it("requires the same author name", () => {
    const other = { kind: "agent" as const, name: "Other" };
    expect(
      shouldCoalesce({ latest: base, author: other, now: at(1), windowMs: window, forceNew: false }),
    ).toBe(false);
  });
});
