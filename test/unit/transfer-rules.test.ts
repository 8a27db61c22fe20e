import { anonymousCaller, type Caller } from "../../src/auth/caller";
import { isOperator } from "../../src/auth/operators";
import type { HeadRecord, RevisionRecord, TaskBundle } from "../../src/plans/ports/records";
import {
  checkBundle,
  decodeTaskPageToken,
  encodeTaskPageToken,
  sameTask,
  snapshotOf,
  taskPageSize,
} from "../../src/plans/transfer-rules";

// The pure rules of export and import (issue 46): what an import must be, what "stored exactly so"
// means, the snapshot token, ListTasks' paging, and who is an operator.

const at = new Date("2026-12-05T01:02:03.456Z");
const later = new Date("2026-12-05T01:02:04.000Z");

function revision(number: number, content: string, extra: Partial<RevisionRecord> = {}): RevisionRecord {
  return {
    id: `00000000-0000-4000-8000-${String(number).padStart(12, "0")}`,
    taskId: "t-1",
    number,
    title: "Plan",
    content,
    contentBytes: Buffer.byteLength(content, "utf8"),
    contentChars: [...content].length,
    authorKind: "agent",
    authorName: "ann",
    revertOfRevisionId: null,
    createdAt: at,
    updatedAt: later,
    rowVersion: 1,
    merge: null,
    ...extra,
  };
}

function bundle(contents: readonly string[], headExtra: Partial<HeadRecord> = {}): TaskBundle {
  const revisions = contents.map((content, i) => revision(i + 1, content));
  const last = contents[contents.length - 1] ?? "";
  return {
    task: { id: "t-1", workspaceId: "ws-1", title: "a task", createdAt: at },
    head: {
      taskId: "t-1",
      title: "Plan",
      content: last,
      contentBytes: Buffer.byteLength(last, "utf8"),
      contentChars: [...last].length,
      version: contents.length + 2,
      createdBy: "agent",
      createdAt: at,
      updatedAt: later,
      latestRevisionNumber: contents.length,
      deleted: false,
      implementationStartedAt: null,
      implementationStartedBy: null,
      implementationStartedSessionId: null,
      ...headExtra,
    },
    revisions,
  };
}

const HOSTILE = "a \u0000 \u2028 \u{1F600} e\u0301";
const problemOf = (run: () => void): string => {
  try {
    run();
  } catch (error) {
    return `${(error as { reason: string }).reason}: ${(error as { metadata: Record<string, string> }).metadata.problem ?? ""}`;
  }
  return "accepted";
};

describe("checkBundle: an import is one consistent task", () => {
  it("accepts a task exactly as exported, hostile text, a revert marker and a tombstone included", () => {
    expect(problemOf(() => checkBundle(bundle(["one", HOSTILE]), 2))).toBe("accepted");
    const reverted = bundle(["one", "two", "one"]);
    const revisions = [...reverted.revisions];
    revisions[2] = revision(3, "one", { revertOfRevisionId: revisions[0]?.id ?? null });
    expect(problemOf(() => checkBundle({ ...reverted, revisions }, 3))).toBe("accepted");
    const tombstone = bundle(["gone"], { deleted: true, content: "", contentBytes: 0, contentChars: 0 });
    expect(problemOf(() => checkBundle(tombstone, 1))).toBe("accepted");
    expect(problemOf(() => checkBundle({ ...bundle([]), head: null }, 0))).toBe("accepted");
  });

  it.each<[string, () => void, string]>([
    [
      "a count other than declared",
      () => checkBundle(bundle(["one"]), 2),
      "1 revisions arrived, 2 were declared",
    ],
    [
      "a gap in the numbering",
      () => {
        const b = bundle(["one", "two"]);
        checkBundle({ ...b, revisions: [b.revisions[0] as RevisionRecord, revision(3, "two")] }, 2);
      },
      "revision 2 is numbered 3",
    ],
    [
      "a size that is not its content's",
      () => {
        const b = bundle(["one"]);
        checkBundle({ ...b, revisions: [revision(1, "one", { contentBytes: 4 })] }, 1);
      },
      "revision 1's content does not have its recorded size",
    ],
    [
      "a revert of a later revision",
      () => {
        const b = bundle(["one", "two"]);
        const first = revision(1, "one", { revertOfRevisionId: b.revisions[1]?.id ?? null });
        checkBundle({ ...b, revisions: [first, b.revisions[1] as RevisionRecord] }, 2);
      },
      "revision 1 reverts a revision that is not an earlier one of the task",
    ],
    [
      "HEAD not at its newest revision's content",
      () => checkBundle(bundle(["one", "two"], { content: "one", contentBytes: 3, contentChars: 3 }), 2),
      "the plan's content is not its newest revision's",
    ],
    [
      "a content over the plan size limit",
      () => checkBundle(bundle(["x".repeat(262_145)]), 1),
      "revision 1 is larger than 262144 bytes",
    ],
    [
      "revisions without a plan",
      () => checkBundle({ ...bundle(["one"]), head: null }, 1),
      "revisions arrived without a plan",
    ],
  ])("refuses %s with IMPORT_INVALID", (_what, run, problem) => {
    expect(problemOf(run)).toBe(`IMPORT_INVALID: ${problem}`);
  });
});

describe("sameTask: stored exactly as imported", () => {
  it("is true for an equal copy and false for one changed byte, time, marker or row version", () => {
    const stored = bundle(["one", HOSTILE]);
    expect(sameTask(stored, structuredClone(stored))).toBe(true);
    const changed = (revisionExtra: Partial<RevisionRecord>) => ({
      ...stored,
      revisions: [
        stored.revisions[0] as RevisionRecord,
        { ...(stored.revisions[1] as RevisionRecord), ...revisionExtra },
      ],
    });
    expect(sameTask(stored, changed({ content: HOSTILE.replace("\u0000", "\u0001") }))).toBe(false);
    expect(sameTask(stored, changed({ updatedAt: new Date(later.getTime() + 1) }))).toBe(false);
    expect(sameTask(stored, changed({ rowVersion: 2 }))).toBe(false);
    expect(sameTask(stored, changed({ merge: { fromVersion: 1, toVersion: 2 } }))).toBe(false);
    expect(sameTask(stored, { ...stored, head: { ...(stored.head as HeadRecord), version: 9 } })).toBe(false);
    expect(sameTask(stored, { ...stored, task: { ...stored.task, title: "other" } })).toBe(false);
  });
});

describe("the snapshot token and ListTasks' paging", () => {
  it("the snapshot changes with the version, the revision count and the implementation mark", () => {
    const b = bundle(["one"]);
    const page = { task: b.task, head: b.head, revisionCount: 1 };
    const token = snapshotOf(page);
    expect(snapshotOf(structuredClone(page))).toBe(token);
    expect(snapshotOf({ ...page, revisionCount: 2 })).not.toBe(token);
    expect(snapshotOf({ ...page, head: { ...(b.head as HeadRecord), version: 4 } })).not.toBe(token);
    expect(
      snapshotOf({ ...page, head: { ...(b.head as HeadRecord), implementationStartedAt: at } }),
    ).not.toBe(token);
  });

  it("a page token goes back to its id, only for the same workspace filter; page sizes 0 -> 100, at most 1,000", () => {
    expect(decodeTaskPageToken(encodeTaskPageToken("t-9", "ws-1"), "ws-1")).toBe("t-9");
    expect(decodeTaskPageToken("", null)).toBe("");
    expect(() => decodeTaskPageToken(encodeTaskPageToken("t-9", "ws-1"), "ws-2")).toThrow(/page_token/);
    expect(() => decodeTaskPageToken("not a token", null)).toThrow(/page_token/);
    expect([taskPageSize(0), taskPageSize(5), taskPageSize(5_000)]).toEqual([100, 5, 1_000]);
    expect(() => taskPageSize(-1)).toThrow(/page_size/);
  });
});

describe("isOperator", () => {
  const token = (subject: string): Caller => ({
    authenticated: true,
    subject,
    kind: "user",
    name: subject,
    workspaces: new Set(["ws-1"]),
  });
  it("every caller with auth off; with auth on only a listed subject", () => {
    const operators = new Set(["ops"]);
    expect(isOperator(anonymousCaller, new Set())).toBe(true);
    expect(isOperator(token("ops"), operators)).toBe(true);
    expect(isOperator(token("agent"), operators)).toBe(false);
    expect(isOperator(token("ops"), new Set())).toBe(false);
  });
});
