import { Worker } from "node:worker_threads";
import type { ChecklistCounter } from "../plans/ports/checklist-counter";
import type { ChecklistCount } from "../plans/ports/records";
import { checklistCounterOf, countChecklist } from "../plans/rules/checklist-progress";
import { MAX_NESTING, planMarkdownOf } from "../plans/rules/plan-markdown";

/**
 * Texts shorter than this (UTF-16 units) are counted on the event loop: at most a few ms, for the
 * slowest shape (bench/RESULTS.md, `bench:checklist`: 1.0 ms for 1 KiB nested 16 deep).
 */
export const INLINE_COUNT_CHARS = 512;

interface Asked {
  readonly id: number;
  readonly text: string;
}
type Answered = { readonly id: number; readonly count: ChecklistCount };
type Waiting = Map<number, { resolve: (c: ChecklistCount) => void; reject: (e: Error) => void }>;

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

/** One worker thread and the counts it holds. */
interface Thread {
  readonly worker: Worker;
  readonly waiting: Waiting;
}

/**
 * The checklist counter of a replica (ports/checklist-counter.ts): a short text is counted on the
 * event loop, a longer one on one worker thread, in the order asked (a write waits for its count
 * while the loop serves every other caller). The thread starts at the first long text and is
 * started again after a failure, which fails only the counts that thread held. It does not keep
 * the process alive; `close` ends it.
 */
export class ChecklistThread implements ChecklistCounter {
  private thread: Thread | null = null;
  private next = 0;

  count(text: string): Promise<ChecklistCount> {
    if (text.length < INLINE_COUNT_CHARS) return Promise.resolve(countChecklist(text));
    const { worker, waiting } = this.thread ?? this.start();
    const id = this.next++;
    return new Promise((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      if (waiting.size === 1) worker.ref();
      const asked: Asked = { id, text };
      worker.postMessage(asked);
    });
  }

  /** Ends the thread; counts it still held fail. */
  async close(): Promise<void> {
    const thread = this.thread;
    this.thread = null;
    if (thread === null) return;
    await thread.worker.terminate();
    failAll(thread.waiting, new Error("the checklist thread was closed"));
  }

  private start(): Thread {
    const worker = new Worker(threadSource(), {
      eval: true,
      workerData: { marked: require.resolve("marked"), maxNesting: MAX_NESTING },
    });
    const thread: Thread = { worker, waiting: new Map() };
    const { waiting } = thread;
    worker.unref();
    worker.on("message", ({ id, count }: Answered) => {
      const asked = waiting.get(id);
      waiting.delete(id);
      if (waiting.size === 0) worker.unref();
      asked?.resolve(count);
    });
    // A failure ("error", then "exit", or "exit" alone) ends this thread and its counts only: the
    // next long text starts another, whose counts are its own.
    const gone = (error: Error) => {
      if (this.thread === thread) this.thread = null;
      failAll(waiting, error);
    };
    worker.on("error", gone);
    worker.on("exit", (code) => gone(new Error(`the checklist thread exited (code ${code})`)));
    this.thread = thread;
    return thread;
  }
}

function failAll(waiting: Waiting, error: Error): void {
  const held = [...waiting.values()];
  waiting.clear();
  for (const { reject } of held) reject(error);
}
