/**
 * Benchmark (not a test): what counting a plan's checklist (issue 56 item 3, ADR 0015) costs a
 * write, and what it leaves the event loop every other caller shares:
 *
 * - the count's time by size (1, 50 and 200 KiB) and shape (a flat checklist, one nested 16 deep,
 *   prose with a few boxes), medians of `BENCH_ROUNDS` runs on the event loop (countChecklist) and
 *   through the counting thread (ChecklistThread, whose round trip small texts skip);
 * - the loop's worst stall while 8 counts of a 200 KiB checklist are asked at once, through the
 *   thread and, for comparison, on the loop (as counting inline would do): a timer that should fire
 *   every 1 ms records how late it fires.
 *
 *   npm run bench:checklist
 *   BENCH_ROUNDS=15 npm run bench:checklist
 */
import { countChecklist } from "../../src/plans/rules/checklist-progress";
import { ChecklistThread } from "../../src/threads/checklist-thread";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? "7");
const KIB = 1024;

function fill(line: (i: number) => string, size: number): string {
  let text = "";
  for (let i = 0; text.length < size; i++) text += line(i);
  return text.slice(0, size);
}

const SHAPES: Record<string, (size: number) => string> = {
  flat: (size) => fill((i) => `- [${i % 3 === 0 ? "x" : " "}] step ${i} of the plan\n`, size),
  nested16: (size) => fill((i) => `${"  ".repeat(i % 16)}- [${i % 2 ? "x" : " "}] step ${i}\n`, size),
  prose: (size) =>
    fill(
      (i) => (i % 20 === 0 ? `- [x] milestone ${i}\n\n` : `Notes on step ${i}: what was tried and why.\n\n`),
      size,
    ),
};

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

async function timed(work: () => unknown): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

// The worst lateness of a 1 ms timer while `work` runs.
async function worstStall(work: () => Promise<unknown>): Promise<number> {
  let worst = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 1);
    last = now;
  }, 1);
  try {
    await work();
    await new Promise((resolve) => setTimeout(resolve, 5));
  } finally {
    clearInterval(timer);
  }
  return worst;
}

async function main(): Promise<void> {
  const thread = new ChecklistThread();
  try {
    await thread.count(SHAPES.flat!(8 * KIB)); // starts the thread
    console.log(`checklist count, median of ${ROUNDS} (ms): size shape  loop  thread`);
    for (const size of [1, 50, 200]) {
      for (const [shape, make] of Object.entries(SHAPES)) {
        const text = make(size * KIB);
        const loop: number[] = [];
        const threaded: number[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          loop.push(await timed(() => countChecklist(text)));
          threaded.push(await timed(() => thread.count(text)));
        }
        console.log(
          `  ${String(size).padStart(3)} KiB ${shape.padEnd(8)} ${median(loop).toFixed(1).padStart(7)} ${median(threaded).toFixed(1).padStart(7)}`,
        );
      }
    }
    const big = SHAPES.flat!(200 * KIB);
    const onThread: number[] = [];
    const onLoop: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      onThread.push(await worstStall(() => Promise.all(Array.from({ length: 8 }, () => thread.count(big)))));
      onLoop.push(await worstStall(async () => Array.from({ length: 8 }, () => countChecklist(big))));
    }
    console.log(
      `event loop's worst stall while 8 counts of a 200 KiB checklist run, median of ${ROUNDS}:` +
        ` through the thread ${median(onThread).toFixed(1)} ms, on the loop ${median(onLoop).toFixed(1)} ms`,
    );
  } finally {
    await thread.close();
  }
}

void main();
