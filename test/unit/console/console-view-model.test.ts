import {
  diffLines,
  diffSummary,
  formatBytes,
  formatTime,
  progressLabel,
  revisionProgress,
  type RevisionLike,
  revisionRows,
  shownProgress,
  taskIdFromHash,
  visibleBidiControls,
  writerName,
} from "../../../src/console/page/view-model";

const at = (seconds: number, nanos = 0) => ({ seconds: BigInt(seconds), nanos });

function revision(number: number, fields: Partial<RevisionLike> = {}): RevisionLike {
  return {
    id: `rev-${number}`,
    revisionNumber: BigInt(number),
    authorKind: 1,
    authorName: "Claude",
    createdAt: at(1_780_000_000 + number),
    updatedAt: at(1_780_000_000 + number),
    contentBytes: 1234n,
    ...fields,
  };
}

describe("the console's revision rows", () => {
  it("show number, author, kind, time and size as text, with no marker for a plain revision", () => {
    expect(revisionRows([revision(1)])).toEqual([
      {
        id: "rev-1",
        number: "1",
        author: "Claude",
        kind: "agent",
        time: "2026-05-28T20:26:41Z",
        markers: [],
        size: "1,234 bytes",
        checklist: "",
      },
    ]);
  });

  it("show each revision's stored checklist progress, none for a revision without one, nothing when not counted", () => {
    const rows = revisionRows([
      revision(3, { checklist: { checked: 2n, total: 3n } }),
      revision(2, { checklist: { checked: 0n, total: 0n } }),
      revision(1),
    ]);
    expect(rows.map((row) => [row.number, row.checklist])).toEqual([
      ["3", "2 of 3 done"],
      ["2", "none"],
      ["1", ""],
    ]);
    expect(revisionProgress({ checked: 1n, total: 3n })).toBe("1 of 3 done");
  });

  it("mark a revision updated after its creation as coalesced, a revert with the number it copies, a merge with its versions", () => {
    const rows = revisionRows([
      revision(4, { merge: { fromVersion: 2n, toVersion: 3n }, authorKind: 2, authorName: "Ann" }),
      revision(3, { revertOfRevisionId: "rev-1" }),
      revision(2, { updatedAt: at(1_780_000_002, 5_000_000) }),
      revision(1, { revertOfRevisionId: "rev-gone" }),
    ]);
    expect(rows.map((row) => [row.number, row.kind, row.markers])).toEqual([
      ["4", "user", ["merge of v2..v3"]],
      ["3", "agent", ["revert of #1"]],
      ["2", "agent", ["coalesced"]],
      ["1", "agent", ["revert"]],
    ]);
  });

  it("keep hostile author names exactly, for the page to insert as text", () => {
    const name = `<img src=x onerror="window.__pwned=1">`;
    expect(revisionRows([revision(1, { authorName: name })])[0]?.author).toBe(name);
  });
});

describe("the console's diff lines", () => {
  it("classify headers, hunks, added, removed, context and the no-newline note", () => {
    const unified = [
      "--- revision 1",
      "+++ revision 2",
      "@@ -1,2 +1,2 @@",
      " same",
      "-old",
      "--- removed line that looks like a header",
      "+new",
      "\\ No newline at end of file",
      "",
    ].join("\n");
    expect(diffLines(unified).map((line) => line.kind)).toEqual([
      "header",
      "header",
      "hunk",
      "context",
      "removed",
      "removed",
      "added",
      "note",
    ]);
  });

  it("show a carriage return as a visible mark, so a change of line ending reads as one", () => {
    expect(diffLines("@@ -1 +1 @@\n-a\r\n+a\n")).toEqual([
      { kind: "hunk", text: "@@ -1 +1 @@" },
      { kind: "removed", text: "-a␍" },
      { kind: "added", text: "+a" },
    ]);
  });

  it("are none for equal contents (an empty diff)", () => {
    expect(diffLines("")).toEqual([]);
  });

  it("are summed up with their counts and sizes", () => {
    expect(diffSummary({ linesAdded: 3n, linesRemoved: 1n, oldBytes: 1000n, newBytes: 1n })).toBe(
      "+3 −1 lines, 1,000 bytes → 1 byte",
    );
  });
});

describe("the console's small formats", () => {
  it("group sizes by thousands and give times in UTC to the second", () => {
    expect([formatBytes(0n), formatBytes(262_144n), formatBytes(1234567)]).toEqual([
      "0 bytes",
      "262,144 bytes",
      "1,234,567 bytes",
    ]);
    expect([formatTime(at(0, 999_000_000)), formatTime(undefined)]).toEqual(["1970-01-01T00:00:00Z", ""]);
  });

  it("show a checklist's progress, and none for a plan without one", () => {
    expect([
      progressLabel({ checked: 3, total: 7 }),
      progressLabel({ checked: 0, total: 1 }),
      progressLabel({ checked: 0, total: 0 }),
    ]).toEqual(["3 of 7 done", "0 of 1 done", null]);
  });

  it("show the plan's stored checklist progress when the answer carries it, and count only when it does not", () => {
    const count = jest.fn(() => ({ checked: 9, total: 9 }));
    // A stored figure, even 0 of 0 (the HTTP door's JSON leaves zeros out: `{}`), is shown as stored.
    expect(shownProgress({ checked: 1n, total: 3n }, count)).toEqual({ checked: 1, total: 3 });
    expect(shownProgress({ checked: 0n, total: 0n }, count)).toEqual({ checked: 0, total: 0 });
    expect(count).not.toHaveBeenCalled();
    // A plan written before the service counted: counted from its content, as before.
    expect(shownProgress(undefined, count)).toEqual({ checked: 9, total: 9 });
    expect(count).toHaveBeenCalledTimes(1);
  });

  it("read the task id from the address's fragment (#task=...), decoded", () => {
    expect([taskIdFromHash("#task=task-1"), taskIdFromHash("#task=a%20b&x=1"), taskIdFromHash("")]).toEqual([
      "task-1",
      "a b",
      "",
    ]);
  });
});

describe("the console's bidi controls", () => {
  it("show each override, embedding, isolate and mark as its code point, and leave other text alone", () => {
    expect(visibleBidiControls("Mallory\u202Enimda")).toBe("Mallory[U+202E]nimda");
    expect(visibleBidiControls("\u202A\u202B\u202C\u202D\u2066\u2067\u2068\u2069\u200E\u200F\u061C")).toBe(
      "[U+202A][U+202B][U+202C][U+202D][U+2066][U+2067][U+2068][U+2069][U+200E][U+200F][U+061C]",
    );
    expect(visibleBidiControls("שלום Ann ✓")).toBe("שלום Ann ✓");
  });

  it("show in diff lines too", () => {
    expect(diffLines("+evil\u202Etxt.exe\n")).toEqual([{ kind: "added", text: "+evil[U+202E]txt.exe" }]);
  });
});

describe("the console's status line", () => {
  it("names the writer of a watched change, and nobody for a snapshot or a change without a name", () => {
    // Authors as protobuf-es gives them (AuthorKind 1 agent, 0 unspecified).
    const agent = (name: string) => ({ kind: 1, name });
    const unspecified = { kind: 0, name: "" };
    expect(writerName({ kind: 3, author: agent("Mallory\u202Enimda") })).toBe("Mallory\u202Enimda");
    // A snapshot (PLAN_CHANGE_KIND_SNAPSHOT) comes with an unspecified author and no name: the page
    // said "live: version 3 by  at ..." when a watch started again from one.
    expect(writerName({ kind: 1, author: unspecified })).toBeNull();
    expect(writerName({ kind: 3, author: unspecified })).toBeNull();
    expect(writerName({ kind: 3 })).toBeNull();
  });
});
