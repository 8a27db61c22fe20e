import fc from "fast-check";
import type { StoredChecklist } from "../../../src/plans/ports/records";
import { composeAppend, composeAppendInStore, dropLeadingBlankLines } from "../../../src/plans/rules/compose";
import { appendedChecklist, closedChecklist, probedText } from "../../../src/plans/rules/checklist-append";
import { checklistProgress, countChecklist } from "../../../src/plans/rules/checklist-progress";
import { storedChecklistOf, writtenChecklist } from "../../../src/plans/writes/checklist-count";
import { trimmedLengths } from "../../../src/text/unicode";
import { checklistEnv } from "../../harness/fixtures/records";

const counter = checklistEnv.checklist;

// The blocks plans are made of, the ones that end open or continue across a blank line included.
const pieces = [
  "- [ ] open item",
  "- [x] done item",
  "* [X] starred",
  "1. [ ] numbered",
  "  - [x] nested",
  "    - [ ] indented four",
  "\t- [x] tabbed",
  "> - [x] quoted",
  "```",
  "```js",
  "~~~",
  "<pre>",
  "</pre>",
  "<!--",
  "-->",
  "<div>",
  "    code line - [x] not",
  "plain text",
  "",
  "## heading",
  "| a | b |",
  "|---|---|",
  "- plain bullet",
  "   ",
  "\r",
];
const text = fc.array(fc.constantFrom(...pieces), { maxLength: 12 }).map((lines) => lines.join("\n"));

const whole = async (t: string): Promise<StoredChecklist> => storedChecklistOf(t, counter);

describe("a content's stored checklist (the end probe)", () => {
  it.each([
    ["ends closed", "- [x] a\n- [ ] b\n", { checked: 1, total: 2, openEnd: false }],
    ["ends in an open fence", "- [x] a\n\n```\n- [ ] in code\n", { checked: 1, total: 1, openEnd: true }],
    ["ends in an open <pre>", "- [x] a\n\n<pre>\n- [ ] raw\n", { checked: 1, total: 1, openEnd: true }],
    ["ends in an open comment", "<!--\n- [x] hidden\n", { checked: 0, total: 0, openEnd: true }],
    ["a closed fence", "```\n- [ ] x\n```\n", { checked: 0, total: 0, openEnd: false }],
    ["empty", "", { checked: 0, total: 0, openEnd: false }],
    ["its last item is the probe's text", "- [ ] end\n", { checked: 0, total: 1, openEnd: false }],
  ])("%s", async (_name, content, expected) => {
    expect(await whole(content)).toEqual(expected);
    expect({ checked: expected.checked, total: expected.total }).toEqual(checklistProgress(content));
  });

  it("the probe read back is null when the content's last block took it in", () => {
    expect(closedChecklist(countChecklist(probedText("```\n")))).toBeNull();
    expect(closedChecklist(countChecklist(probedText("- [x] a")))).toEqual({
      checked: 1,
      total: 1,
      openEnd: false,
    });
  });
});

describe("an append's checklist", () => {
  it("is the sum only when the fragment is blocks of its own", () => {
    const closed = { checked: 1, total: 2, openEnd: false };
    const own = { checked: 1, total: 1, openEnd: false };
    expect(appendedChecklist(closed, false, "- [x] c", own)).toEqual({
      checked: 2,
      total: 3,
      openEnd: false,
    });
    expect(appendedChecklist({ ...closed, openEnd: true }, false, "- [x] c", own)).toBeNull();
    expect(appendedChecklist(closed, false, "    - [x] c", own)).toBeNull();
    expect(appendedChecklist(closed, false, "\t- [x] c", own)).toBeNull();
    expect(appendedChecklist(null, false, "- [x] c", own)).toBeNull();
    expect(appendedChecklist(null, true, "    - [x] c", own)).toEqual(own);
  });

  // The differential: an append counted from the stored checklist and its fragment's (reading the
  // stored text only when it must) is the count of the whole result, whatever the two texts are.
  it("equals the count of the whole result, for random plans and fragments (neither read twice)", async () => {
    await fc.assert(
      fc.asyncProperty(text, fc.array(text, { minLength: 1, maxLength: 4 }), async (first, fragments) => {
        let content = first;
        let stored: StoredChecklist | null = await whole(first);
        for (const fragment of fragments) {
          const { change } = composeAppendInStore(trimmedLengths(content), fragment);
          const state = { live: { checklist: stored } } as never;
          const env = { ...checklistEnv, storedContent: () => Promise.resolve(content) } as never;
          const appended: StoredChecklist = await writtenChecklist(state, env, change);
          content = composeAppend(content, fragment);
          expect(appended).toEqual(await whole(content));
          stored = appended;
        }
      }),
      { numRuns: 1500 },
    );
  });

  it("reads the stored text only when the sum cannot be trusted", async () => {
    let reads = 0;
    const read = (content: string) => () => {
      reads += 1;
      return Promise.resolve(content);
    };
    const append = async (content: string, fragment: string) => {
      const { change } = composeAppendInStore(trimmedLengths(content), fragment);
      const state = { live: { checklist: await whole(content) } } as never;
      return writtenChecklist(state, { ...checklistEnv, storedContent: read(content) } as never, change);
    };
    await append("- [x] a\n", "- [ ] b\n");
    expect(reads).toBe(0);
    await append("```\n", "- [ ] b\n");
    expect(reads).toBe(1);
    await append("- [x] a\n", dropLeadingBlankLines("\n\n    - [ ] b\n"));
    expect(reads).toBe(2);
  });
});
