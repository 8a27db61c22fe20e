import type { WriteState } from "../../../src/plans/pipeline/write-command";
import { PlanError } from "../../../src/plans/errors";
import { type MergeRequest, mergedContent } from "../../../src/plans/writes/stale-merge";

// A stale EditPlan with merge (issue 56, item 1): old_text exactly once in the current content (as
// in the version read) is re-applied there; otherwise the edit applied to the version read is
// line-merged as before. The state is what the decision reads under the lock: the content at
// expected_version (base) and the current one (theirs, at version 2).
function merged(base: string, theirs: string, oldText: string, newText: string) {
  const write: MergeRequest = { merge: true, mode: "edit", expectedVersion: 1, oldText, content: newText };
  const state = {
    live: { version: 2, content: theirs },
    atVersion: { derivable: true, version: 1, content: base },
  } as unknown as WriteState<"content">;
  try {
    const result = mergedContent(write, state);
    return result && { method: result.method, content: result.content, marker: result.marker };
  } catch (error) {
    if (error instanceof PlanError) return { refused: error.reason };
    throw error;
  }
}

const CHECKLIST = "# Plan\n- [ ] a\n- [ ] b\n- [ ] c\n- [ ] d\n";

describe("a stale exact edit with merge", () => {
  it.each([
    {
      case: "the neighbouring box ticked: re-applied",
      theirs: CHECKLIST.replace("- [ ] c", "- [x] c"),
      oldText: "- [ ] d",
      newText: "- [x] d",
      expected: { method: "edit", content: "# Plan\n- [ ] a\n- [ ] b\n- [x] c\n- [x] d\n" },
    },
    {
      case: "the same line changed elsewhere by theirs: re-applied where the line merge would conflict",
      theirs: CHECKLIST.replace("- [ ] d", "- [ ] d (owner: Ada)"),
      oldText: "- [ ] d",
      newText: "- [x] d",
      expected: { method: "edit", content: "# Plan\n- [ ] a\n- [ ] b\n- [ ] c\n- [x] d (owner: Ada)\n" },
    },
    {
      case: "old_text moved by theirs (lines reordered): applied where it is now",
      theirs: "# Plan\n- [ ] d\n- [ ] a\n- [ ] b\n- [ ] c\n",
      oldText: "- [ ] d\n",
      newText: "- [x] d\n",
      expected: { method: "edit", content: "# Plan\n- [x] d\n- [ ] a\n- [ ] b\n- [ ] c\n" },
    },
    {
      case: "old_text gone from the current content, the line merge clean: line-merged",
      theirs: CHECKLIST.replace("- [ ] b", "- [x] b"),
      oldText: "- [ ] b\n- [ ] c",
      newText: "- [ ] b\n- [x] c",
      expected: { method: "lines", content: "# Plan\n- [ ] a\n- [x] b\n- [x] c\n- [ ] d\n" },
    },
    {
      case: "old_text gone, the same line changed by both: MERGE_CONFLICT",
      theirs: CHECKLIST.replace("- [ ] d", "- [-] d"),
      oldText: "- [ ] d",
      newText: "- [x] d",
      expected: { refused: "MERGE_CONFLICT" },
    },
    {
      case: "old_text now twice (theirs copied the line): line-merged, the copy kept",
      theirs: CHECKLIST.replace("- [ ] d\n", "- [ ] d\n- [ ] d\n"),
      oldText: "- [ ] d",
      newText: "- [x] d",
      expected: { method: "lines", content: "# Plan\n- [ ] a\n- [ ] b\n- [ ] c\n- [x] d\n- [ ] d\n" },
    },
    {
      case: "old_text now twice, its line changed by theirs too: line-merged, a conflict",
      theirs: "# Plan\n- [ ] d\n- [ ] a\n- [ ] b\n- [ ] c\n- [ ] d later\n",
      oldText: "- [ ] d",
      newText: "- [x] d",
      expected: { refused: "MERGE_CONFLICT" },
    },
    {
      case: "old_text now twice, away from the line edited: line-merged cleanly",
      theirs: `${CHECKLIST}\n## Done\n- [ ] a\n`,
      oldText: "- [ ] a",
      newText: "- [x] a",
      expected: {
        method: "lines",
        content: "# Plan\n- [x] a\n- [ ] b\n- [ ] c\n- [ ] d\n\n## Done\n- [ ] a\n",
      },
    },
    {
      case: "old_text not in the version read, though once in the current one: refused as it was read",
      theirs: `${CHECKLIST}- [ ] e\n`,
      oldText: "- [ ] e",
      newText: "- [x] e",
      expected: { refused: "EDIT_TEXT_NOT_FOUND" },
    },
    {
      case: "old_text twice in the version read, once now: refused as it was read",
      base: `${CHECKLIST}- [ ] d\n`,
      theirs: CHECKLIST,
      oldText: "- [ ] d",
      newText: "- [x] d",
      expected: { refused: "EDIT_TEXT_NOT_UNIQUE" },
    },
    {
      case: "CRLF kept as it is",
      base: "# Plan\r\n- [ ] a\r\n- [ ] b\r\n",
      theirs: "# Plan\r\n- [x] a\r\n- [ ] b\r\n",
      oldText: "- [ ] b\r\n",
      newText: "- [x] b\r\n",
      expected: { method: "edit", content: "# Plan\r\n- [x] a\r\n- [x] b\r\n" },
    },
    {
      case: "no trailing newline, theirs appended after it",
      base: "# Plan\n- [ ] a",
      theirs: "# Plan\n- [ ] a\n- [ ] b",
      oldText: "- [ ] a",
      newText: "- [x] a",
      expected: { method: "edit", content: "# Plan\n- [x] a\n- [ ] b" },
    },
  ])("$case", ({ base, theirs, oldText, newText, expected }) => {
    const result = merged(base ?? CHECKLIST, theirs, oldText, newText);
    expect(result).toMatchObject(expected);
    if ("method" in expected) expect(result).toMatchObject({ marker: { fromVersion: 1, toVersion: 2 } });
  });

  it("an edit at the current version does not merge; a replace never re-applies", () => {
    const state = {
      live: { version: 1, content: CHECKLIST },
      atVersion: { derivable: true, version: 1, content: CHECKLIST },
    } as unknown as WriteState<"content">;
    const edit: MergeRequest = {
      merge: true,
      mode: "edit",
      expectedVersion: 1,
      oldText: "- [ ] a",
      content: "x",
    };
    expect(mergedContent(edit, state)).toBeNull();
    const stale = { ...state, live: { version: 2, content: CHECKLIST.replace("- [ ] c", "- [x] c") } };
    const replace: MergeRequest = {
      merge: true,
      mode: "replace",
      expectedVersion: 1,
      content: CHECKLIST.replace("- [ ] d", "- [x] d"),
    };
    expect(mergedContent(replace, stale as unknown as WriteState<"content">)?.method).toBe("lines");
  });
});
