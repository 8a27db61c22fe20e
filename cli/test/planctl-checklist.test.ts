import { checklistCell, checklistField, checklistJson, checklistWords, planMetaLines } from "@taskplans/cli";

// How planctl shows a plan's checklist progress (issue 56, item 3): the service's figure, in words
// (get --meta), as a table cell (history, task get, task list) and as JSON numbers; absent means
// "not counted yet" and shows nothing.
describe("planctl's checklist progress", () => {
  it.each([
    ["some ticked", { checked: 3, total: 5 }, "3 of 5 done", "3/5"],
    ["none ticked", { checked: 0, total: 3 }, "0 of 3 done", "0/3"],
    ["all ticked", { checked: 2, total: 2 }, "2 of 2 done", "2/2"],
    ["no checklist (total 0)", { checked: 0, total: 0 }, "none", "none"],
    ["not counted yet (absent)", undefined, null, "-"],
  ])("%s: words and cell", (_what, progress, words, cell) => {
    expect(checklistWords(checklistJson(progress))).toBe(words);
    expect(checklistCell(checklistJson(progress))).toBe(cell);
  });

  it("JSON carries checked and total as numbers, and leaves the field out when absent", () => {
    expect(checklistField({ checked: 1, total: 3 })).toEqual({ checklist: { checked: 1, total: 3 } });
    expect(checklistField({ checked: 0, total: 0 })).toEqual({ checklist: { checked: 0, total: 0 } });
    expect(checklistField(undefined)).toEqual({});
    expect("checklist" in checklistField(undefined)).toBe(false);
  });

  const meta = {
    task_id: "t-1",
    title: "Ship it",
    version: 4,
    content_bytes: 120,
    content_chars: 118,
    latest_revision_number: 3,
    created_by: "alice",
    created_at: "2026-12-07T10:00:00.000Z",
    updated_at: "2026-12-07T11:00:00.000Z",
    implementation_started_at: null,
    implementation_started_by: null,
  };

  it("get --meta prints one line per field and the checklist line last", () => {
    expect(planMetaLines({ ...meta, checklist: { checked: 1, total: 3 } })).toEqual([
      "task: t-1",
      "title: Ship it",
      "version: 4",
      "size: 120 bytes, 118 characters",
      "revision: 3",
      "created: 2026-12-07T10:00:00.000Z by alice",
      "updated: 2026-12-07T11:00:00.000Z",
      "checklist: 1 of 3 done",
    ]);
  });

  it("get --meta says none for a plan without a checklist, and leaves the line out when not counted", () => {
    expect(planMetaLines({ ...meta, checklist: { checked: 0, total: 0 } }).at(-1)).toBe("checklist: none");
    const uncounted = planMetaLines(meta);
    expect(uncounted.some((line) => line.startsWith("checklist"))).toBe(false);
    expect(uncounted.at(-1)).toBe("updated: 2026-12-07T11:00:00.000Z");
  });

  it("get --meta names who started the implementation, when someone did", () => {
    const started = {
      ...meta,
      implementation_started_at: "2026-12-07T12:00:00.000Z",
      implementation_started_by: "bob",
    };
    expect(planMetaLines(started)).toContain("implementation started: 2026-12-07T12:00:00.000Z by bob");
  });
});
