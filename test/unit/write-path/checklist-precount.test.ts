import { CountCache } from "../../../src/plans/pipeline/checklist-cache";
import type { WriteEnv } from "../../../src/plans/pipeline/write-command";
import type { ChecklistCount } from "../../../src/plans/ports/records";
import { countChecklist } from "../../../src/plans/rules/checklist-progress";
import { commandOf, type ContentWrite } from "../../../src/plans/writes/content-decision";
import { contentCommit, decideCommand, type TestState } from "../../harness/model/decide-content";
import { checklistEnv, headRecord, revisionRecord } from "../../harness/fixtures/records";

// A write counts its new content's checklist before its transaction when the request tells what it
// will be (write-command.ts `precount`), so that on SQLite no other task's write waits for the count:
// the decision, counting the same text, then finds every count made (none on the replica's counter).

const STORED = "# P\n\n- [x] a\n- [ ] b\n- [ ] c\n";
const agent = { kind: "agent" as const, name: "Agent" };

function recording(): { counter: { count: (t: string) => Promise<ChecklistCount> }; asked: string[] } {
  const asked: string[] = [];
  return { asked, counter: { count: (text) => (asked.push(text), Promise.resolve(countChecklist(text))) } };
}

function state(content: string): TestState {
  return {
    taskId: "t",
    head: headRecord(content, { version: 5 }),
    latest: revisionRecord(content, { id: "r1" }),
  };
}

const write = (overrides: Partial<ContentWrite>): ContentWrite => ({
  path: "agent-update",
  mode: "replace",
  title: undefined,
  content: "new",
  expectedVersion: 5,
  acknowledgeReduction: false,
  author: agent,
  ...overrides,
});

describe("a write's checklist, counted before its transaction", () => {
  it.each([
    ["a replace", write({ content: "# P\n\n- [x] a\n- [x] b\n" }), { checked: 2, total: 2 }],
    ["a create", write({ path: "agent-create", content: "- [ ] x\n" }), { checked: 0, total: 1 }],
    [
      "an editor save",
      write({ path: "editor-save", expectedVersion: undefined, content: "- [x] y\n" }),
      { checked: 1, total: 1 },
    ],
    [
      "an append",
      write({ mode: "append", expectedVersion: undefined, content: "\n\n- [x] d\n" }),
      { checked: 2, total: 4 },
    ],
    [
      "an edit",
      write({ mode: "edit", path: "agent-edit", oldText: "- [ ] b", content: "- [x] b" }),
      { checked: 2, total: 3 },
    ],
  ])("%s: the decision counts nothing more", async (_name, request, expected) => {
    const { counter, asked } = recording();
    const counts = new CountCache(counter);
    const command = commandOf("t", { write: request, key: undefined });
    const stored = state(STORED);
    await command.precount?.(counts, () => Promise.resolve(headRecord(STORED, { version: 5 })));
    const before = asked.length;
    expect(before).toBeGreaterThan(0);
    const env: WriteEnv = {
      now: new Date(1_000),
      coalesceWindowMs: 0,
      historyBudget: { maxRevisions: 0, maxBytes: 0 },
      newId: () => "id",
      ...checklistEnv,
      checklist: counts,
    };
    const decided = await decideCommand(
      command,
      { ...stored, head: { ...stored.head!, checklist: { checked: 1, total: 3, openEnd: false } } },
      env,
    );
    const { checked, total } = contentCommit(decided).head.checklist ?? { checked: -1, total: -1 };
    expect({ checked, total }).toEqual(expected);
    expect(asked.length).toBe(before);
  });

  it("an edit whose text is not once in the plan read counts nothing before (the decision refuses or merges)", async () => {
    const { counter, asked } = recording();
    const command = commandOf("t", {
      write: write({ mode: "edit", path: "agent-edit", oldText: "- [ ]", content: "x" }),
      key: undefined,
    });
    await command.precount?.(new CountCache(counter), () => Promise.resolve(headRecord(STORED)));
    expect(asked).toEqual([]);
  });

  it("a failed count is not kept: asked again, it is counted again", async () => {
    let calls = 0;
    const cache = new CountCache({
      count: (text) =>
        ++calls === 1 ? Promise.reject(new Error("thread gone")) : Promise.resolve(countChecklist(text)),
    });
    await expect(cache.count("- [x] a\n")).rejects.toThrow("thread gone");
    expect((await cache.count("- [x] a\n")).total).toBe(1);
    expect(calls).toBe(2);
  });
});
