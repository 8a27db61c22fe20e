/**
 * Benchmark (not a test): what recovering from a stale one-line edit costs an agent, in MCP
 * JSON-RPC bytes it sends and receives, today (refusal, full read, edit) against changes-since
 * (refusal, get_task_plan_changes, edit) and merge (one edit with merge=true), on checklist plans of
 * 1, 50 and 200 KiB where another writer ticked one box (issue 44; target: the new paths at most
 * 2 KiB whatever the size), and the tick of the box right below it with merge=true (issue 56;
 * target: one call, under 1 KiB). Bytes only: nothing here is timed.
 *
 *   npm run bench:changes
 *   BENCH_SHOW_MESSAGES=1 npm run bench:changes   # also every message of the 1 KiB sessions, with its bytes
 */
import {
  RECOVERY_PATHS,
  type SessionBytes,
  staleEditSession,
} from "../../test/harness/calls/stale-edit-session";
import { startTestApp } from "../../test/harness/servers/test-app";

const SIZES = [1024, 50 * 1024, 200 * 1024];
const TARGET = 2048;
/** Issue 56: the neighbouring tick recovers in one call of under 1 KiB. */
const NEIGHBOUR_TARGET = 1024;
const SHOW = process.env.BENCH_SHOW_MESSAGES === "1";

async function main(): Promise<void> {
  const app = await startTestApp("sqlite");
  const rows: string[] = [];
  const reads: string[] = [];
  try {
    for (const size of SIZES) {
      const label = `${Math.round(size / 1024)} KiB`;
      let first: SessionBytes | undefined;
      for (const path of RECOVERY_PATHS) {
        const log = (direction: string, bytes: number, message: unknown) =>
          process.stderr.write(`${direction} ${bytes} B ${JSON.stringify(message)}\n`);
        if (SHOW && size === SIZES[0]) process.stderr.write(`\n[${path}]\n`);
        const session = await staleEditSession(
          app,
          () => app.newTask(),
          size,
          path,
          SHOW && size === SIZES[0] ? log : undefined,
        );
        first ??= session;
        const { sent, received, calls } = session.recovery;
        const total = sent + received;
        const target = path.startsWith("neighbouring") ? NEIGHBOUR_TARGET : TARGET;
        const verdict = path.startsWith("refusal, full")
          ? ""
          : total <= target
            ? ` (<= ${target / 1024} KiB)`
            : ` (OVER ${target / 1024} KiB)`;
        rows.push(
          `| ${label} | ${path} | ${calls} | ${sent} | ${received} | ${total}${verdict} | ${session.bothKept ? "yes" : "NO"} |`,
        );
      }
      reads.push(`| ${label} | ${first?.read.sent ?? 0} | ${first?.read.received ?? 0} |`);
    }
  } finally {
    await app.stop();
  }
  process.stdout.write(
    [
      "Recovering from a stale one-line edit after another writer ticked a box (or ticking the box below it), through the MCP tools",
      "(MCP JSON-RPC message bytes the agent sends and receives; embedded SQLite, one server on 127.0.0.1)",
      "",
      "| plan | how the agent recovers | tool calls | bytes sent | bytes received | total | tick and edit both kept |",
      "| --- | --- | ---: | ---: | ---: | ---: | --- |",
      ...rows,
      "",
      "The agent's first read of the plan (common to every path, not in the totals above):",
      "",
      "| plan | bytes sent | bytes received |",
      "| --- | ---: | ---: |",
      ...reads,
      "",
    ].join("\n"),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
