import type { ChangeRecord } from "../../../src/plans/ports/records";
import { decodeCarriedChange, encodeCarriedChange } from "../../../src/watch/change-message";

const change: ChangeRecord = {
  taskId: "t\tab",
  version: 7,
  step: 1,
  kind: "implementation-started",
  committedAt: new Date(1_700_000_000_123),
  plan: {
    taskId: "t\tab",
    title: "Plan ✓",
    contentBytes: 30,
    contentChars: 28,
    version: 7,
    createdBy: "user",
    createdAt: new Date(1_600_000_000_000),
    updatedAt: new Date(1_700_000_000_123),
    latestRevisionNumber: 4,
    deleted: false,
    implementationStartedAt: new Date(1_700_000_000_123),
    implementationStartedBy: "ci",
    implementationStartedSessionId: "s-1",
    checklist: null,
  },
  revision: null,
  author: { kind: "user", name: "ci" },
};

describe("a change carried by a notification", () => {
  it("round-trips exactly, dates included", () => {
    expect(decodeCarriedChange(encodeCarriedChange(change))).toEqual(change);
    const written = {
      ...change,
      step: 0 as const,
      kind: "updated" as const,
      revision: { id: "r", number: 4, coalesced: true },
    };
    expect(
      decodeCarriedChange(
        encodeCarriedChange({ ...written, plan: { ...written.plan, implementationStartedAt: null } }),
      ),
    ).toEqual({
      ...written,
      plan: { ...written.plan, implementationStartedAt: null },
    });
  });

  it("is refused (the hub then reads the history) when it is not one", () => {
    for (const payload of [
      "",
      "{",
      "[]",
      "{}",
      JSON.stringify({ ...change, kind: "renamed" }),
      encodeCarriedChange(change).replace('"version":7', '"version":"7"'),
      JSON.stringify(change),
    ])
      expect(decodeCarriedChange(payload)).toBeNull();
  });
});
