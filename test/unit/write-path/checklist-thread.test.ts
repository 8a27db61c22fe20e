import { ChecklistThread, INLINE_COUNT_CHARS } from "../../../src/threads/checklist-thread";
import { countChecklist } from "../../../src/plans/rules/checklist-progress";

const large = (n: number) =>
  Array.from({ length: n }, (_, i) => `- [${i % 3 === 0 ? "x" : " "}] item ${i}\n`).join("");

describe("ChecklistThread", () => {
  const thread = new ChecklistThread();
  afterAll(() => thread.close());

  it.each([
    ["a short text, on the event loop", "# P\n\n- [x] a\n- [ ] b\n"],
    ["a long checklist, on the thread", large(2_000)],
    ["a long text ending in an open fence", `${large(500)}\n\`\`\`\n- [x] not an item\n`],
    ["nested past the limit", `${"- ".repeat(40)}[x] deep\n${"x".repeat(INLINE_COUNT_CHARS)}\n`],
  ])("%s: counts as the event loop's counter does", async (_name, text) => {
    expect(await thread.count(text)).toEqual(countChecklist(text));
  });

  it("answers concurrent counts each with its own text's", async () => {
    const texts = [large(300), large(400), large(500), "- [x] short\n"];
    const counts = await Promise.all(texts.map((text) => thread.count(text)));
    expect(counts.map((c) => c.total)).toEqual([300, 400, 500, 1]);
  });

  it("a crash fails only the counts its thread held: one asked after it is counted by the next thread", async () => {
    await thread.count(large(200)); // the thread is running
    const { worker } = (thread as unknown as { thread: { worker: import("node:worker_threads").Worker } })
      .thread;
    // Asked the moment the crash is reported ("error"), before the crashed thread's "exit".
    const after = new Promise<number>((resolve, reject) =>
      worker.once("error", () => thread.count(large(300)).then((c) => resolve(c.total), reject)),
    );
    // What a crash is: an uncaught error in the thread (a message it cannot read), with a count behind it.
    worker.postMessage(null);
    const held = thread.count(large(3_000));
    await expect(held).rejects.toThrow();
    expect(await after).toBe(300);
  });

  it("starts again after it is closed", async () => {
    await thread.close();
    expect((await thread.count(large(200))).total).toBe(200);
  });
});
