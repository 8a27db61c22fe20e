import { anonymousCaller, type Caller } from "../../../src/auth/caller";
import { isOperator } from "../../../src/auth/operators";
import type { HeadRecord, RevisionRecord, TaskBundle } from "../../../src/plans/ports/records";
import { ImportStream } from "../../../src/plans/transfer/import-stream";
import { sameTask } from "../../../src/plans/transfer/same-task";
import {
  decodeTaskPageToken,
  encodeTaskPageToken,
  importBounds,
  MAX_IMPORTED_VERSION,
  snapshotOf,
  taskPageSize,
} from "../../../src/plans/transfer/transfer-rules";

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
      checklist: null,
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

/** An import stream given `bundle` part by part (the history budget's defaults), then finished. */
function checkBundle(b: TaskBundle, declaredCount: number): void {
  const stream = new ImportStream(
    { task: b.task, head: b.head, declaredCount },
    importBounds({ maxRevisions: 10_000, maxBytes: 64 * 1024 * 1024 }),
  );
  for (const r of b.revisions) stream.add(r);
  stream.finish();
}

const fieldOf = (run: () => void): string => {
  try {
    run();
  } catch (error) {
    const { reason, metadata } = error as { reason: string; metadata: Record<string, string> };
    return `${reason}: ${metadata.field ?? metadata.problem ?? metadata.limit ?? ""}`;
  }
  return "accepted";
};

describe("ImportStream: each part held to the rules of ordinary writes as it arrives (issue 54)", () => {
  const withRevision = (extra: Partial<RevisionRecord>) => {
    const b = bundle(["one"]);
    return { ...b, revisions: [revision(1, "one", extra)] };
  };
  it.each<[string, TaskBundle, string]>([
    [
      "a 201-character author name",
      withRevision({ authorName: "n".repeat(201) }),
      "INVALID_FIELD: revisions[0].revision.author_name",
    ],
    [
      "a title with a line break",
      withRevision({ title: "a\nb" }),
      "INVALID_FIELD: revisions[0].revision.title",
    ],
    ["a revision id with a slash", withRevision({ id: "a/b" }), "INVALID_FIELD: revisions[0].revision.id"],
    [
      "a revision id of 37 characters",
      withRevision({ id: "a".repeat(37) }),
      "INVALID_FIELD: revisions[0].revision.id",
    ],
    [
      "a row version past 2^48",
      withRevision({ rowVersion: MAX_IMPORTED_VERSION + 1 }),
      "INVALID_FIELD: revisions[0].row_version",
    ],
    [
      "a merge marker past 2^48",
      withRevision({ merge: { fromVersion: 1, toVersion: 2 ** 53 } }),
      "INVALID_FIELD: revisions[0].revision.merge.to_version",
    ],
    [
      "a time past year 9999",
      withRevision({ createdAt: new Date(8.64e15) }),
      "INVALID_FIELD: revisions[0].revision.created_at",
    ],
    [
      "a HEAD version of 2^53 - 2",
      bundle(["one"], { version: 2 ** 53 - 2 }),
      "INVALID_FIELD: start.head.plan.version",
    ],
    [
      "a HEAD title with ESC",
      bundle(["one"], { title: "\u001b[31m" }),
      "INVALID_FIELD: start.head.plan.title",
    ],
    [
      "NUL in the session id",
      bundle(["one"], {
        implementationStartedAt: at,
        implementationStartedBy: "ann",
        implementationStartedSessionId: "a\u0000",
      }),
      "INVALID_FIELD: start.head.plan.implementation_started_session_id",
    ],
    [
      "a mark without its session",
      bundle(["one"], { implementationStartedAt: at, implementationStartedBy: "ann" }),
      "IMPORT_INVALID: the implementation-started mark is incomplete (time, actor and session go together)",
    ],
    [
      "a task title of 1,001 characters",
      {
        ...bundle(["one"]),
        task: { id: "t-1", workspaceId: "ws-1", title: "t".repeat(1_001), createdAt: at },
      },
      "INVALID_FIELD: start.task.title",
    ],
  ])("refuses %s", (_what, b, expected) => {
    expect(fieldOf(() => checkBundle(b, b.revisions.length))).toBe(expected);
  });

  it("accepts a version of exactly 2^48, and refuses a declared count or plan text past its bounds", () => {
    expect(fieldOf(() => checkBundle(bundle(["one"], { version: MAX_IMPORTED_VERSION }), 1))).toBe(
      "accepted",
    );
    const bounds = { maxRevisions: 2, maxBytes: 5 };
    const { task, head } = bundle(["one", "two"]);
    expect(fieldOf(() => new ImportStream({ task, head, declaredCount: 3 }, bounds))).toBe(
      "HISTORY_QUOTA_EXCEEDED: revisions",
    );
    const stream = new ImportStream({ task, head, declaredCount: 2 }, bounds);
    stream.add(revision(1, "one"));
    expect(fieldOf(() => stream.add(revision(2, "two")))).toBe("HISTORY_QUOTA_EXCEEDED: bytes");
  });

  it("bounds an unbudgeted deployment's imports all the same", () => {
    expect(importBounds({ maxRevisions: 0, maxBytes: 0 })).toEqual({
      maxRevisions: 100_000,
      maxBytes: 1024 ** 3,
    });
  });
});

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
      "more revisions than declared",
      () => checkBundle(bundle(["one", "two"]), 1),
      "more than the 1 declared revisions arrived",
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
      "the plan is larger than 262144 bytes",
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
  it("is true for an equal copy and false for one changed byte, time, marker or row version", async () => {
    const stored = bundle(["one", HOSTILE]);
    expect(await sameTask(stored, structuredClone(stored))).toBe(true);
    const changed = (revisionExtra: Partial<RevisionRecord>) => ({
      ...stored,
      revisions: [
        stored.revisions[0] as RevisionRecord,
        { ...(stored.revisions[1] as RevisionRecord), ...revisionExtra },
      ],
    });
    expect(await sameTask(stored, changed({ content: HOSTILE.replace("\u0000", "\u0001") }))).toBe(false);
    expect(await sameTask(stored, changed({ updatedAt: new Date(later.getTime() + 1) }))).toBe(false);
    expect(await sameTask(stored, changed({ rowVersion: 2 }))).toBe(false);
    expect(await sameTask(stored, changed({ merge: { fromVersion: 1, toVersion: 2 } }))).toBe(false);
    expect(await sameTask(stored, { ...stored, head: { ...(stored.head as HeadRecord), version: 9 } })).toBe(
      false,
    );
    expect(await sameTask(stored, { ...stored, task: { ...stored.task, title: "other" } })).toBe(false);
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
