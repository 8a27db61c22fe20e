import { Worker } from "node:worker_threads";
import type { ChecklistCounter } from "../plans/ports/checklist-counter";
import type { ChecklistCount } from "../plans/ports/records";
import { checklistCounterOf, countChecklist } from "../plans/rules/checklist-progress";
import { MAX_NESTING, planMarkdownOf } from "../plans/rules/plan-markdown";

/** Texts shorter than this (UTF-16 units) are counted on the event loop: a few ms at worst. */
export const INLINE_COUNT_CHARS = 2_048;

interface Asked {
  readonly id: number;
  readonly text: string;
}
type Answered = { readonly id: number; readonly count: ChecklistCount };

// The thread's body, from source text (a worker needs JavaScript, and this module also runs as
// TypeScript under the tests): marked loaded anew, the plan's rules made from it by the same
// self-contained functions the event loop's counter is made by, then one count per message.
function threadSource(): string {
  return [
    'const { parentPort, workerData } = require("node:worker_threads");',
    "const marked = require(workerData.marked);",
    `const planMarkdownOf = (${planMarkdownOf.toString()});`,
    `const checklistCounterOf = (${checklistCounterOf.toString()});`,
    "const count = checklistCounterOf(marked, planMarkdownOf(marked.Tokenizer, workerData.maxNesting));",
    "parentPort.on('message', ({ id, text }) => parentPort.postMessage({ id, count: count(text) }));",
  ].join("\n");
}

/**
 * The checklist counter of a replica (ports/checklist-counter.ts): a short text is counted on the
 * event loop, a longer one on one worker thread, in the order asked (a write waits for its count
 * under its task's lock, while the loop serves every other caller). The thread starts at the first
 * long text and is started again after a failure, which fails only the counts it held. It does not
 * keep the process alive; `close` ends it.
 */
export class ChecklistThread implements ChecklistCounter {
  private worker: Worker | null = null;
  private next = 0;
  private readonly waiting = new Map<
    number,
    { resolve: (c: ChecklistCount) => void; reject: (e: Error) => void }
  >();

  count(text: string): Promise<ChecklistCount> {
    if (text.length < INLINE_COUNT_CHARS) return Promise.resolve(countChecklist(text));
    const worker = this.worker ?? this.start();
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      if (this.waiting.size === 1) worker.ref();
      const asked: Asked = { id, text };
      worker.postMessage(asked);
    });
  }

  /** Ends the thread; counts it still held fail. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker !== null) await worker.terminate();
    this.failAll(new Error("the checklist thread was closed"));
  }

  private start(): Worker {
    const worker = new Worker(threadSource(), {
      eval: true,
      workerData: { marked: require.resolve("marked"), maxNesting: MAX_NESTING },
    });
    worker.unref();
    worker.on("message", ({ id, count }: Answered) => {
      const asked = this.waiting.get(id);
      this.waiting.delete(id);
      if (this.waiting.size === 0) worker.unref();
      asked?.resolve(count);
    });
    const gone = (error: Error) => {
      if (this.worker === worker) this.worker = null;
      this.failAll(error);
    };
    worker.on("error", gone);
    worker.on("exit", (code) => gone(new Error(`the checklist thread exited (code ${code})`)));
    this.worker = worker;
    return worker;
  }

  private failAll(error: Error): void {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const { reject } of waiting) reject(error);
  }
}
