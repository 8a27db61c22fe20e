/**
 * Benchmark (not a test): what a 1 KiB addition costs an agent as an APPEND versus a
 * read-then-REPLACE of the same change, on plans of 1 KiB, 64 KiB and 200 KiB. Prints protobuf
 * payload bytes sent and received per change and the median latency, from one run on one server.
 *
 *   npm run bench:append                       # embedded SQLite
 *   BENCH_DATABASE_URL=mysql://... npm run bench:append
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { startApp } from "../../src/app";
import { loadConfig } from "../../src/config/config";
import { WriteMode } from "@taskplans/contract";
import { GetPlanRequest, GetPlanResponse, UpdatePlanRequest, WritePlanResponse } from "@taskplans/contract";
import { connect } from "../../test/harness/calls/rpc";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
const SIZES = [1024, 64 * 1024, 200 * 1024];
const FRAGMENT = `## Section\n${"x".repeat(1024 - 12)}\n`; // 1 KiB

const bytes = (encoded: { finish(): Uint8Array }) => encoded.finish().length;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "taskplans-bench-"));
  const config = loadConfig({
    PLAN_GRPC_ADDRESS: "127.0.0.1:0",
    PLAN_HTTP_ADDRESS: "127.0.0.1:0",
    PLAN_DATABASE_URL: process.env.BENCH_DATABASE_URL ?? `sqlite:${join(dir, "bench.sqlite")}`,
    PLAN_LOG_LEVEL: "silent",
    PLAN_RATE_LIMIT_WRITES: "0", // one client measures the write path, not the limiter
  });
  const app = await startApp(config, { logger: pino({ level: "silent" }) });
  const { plans, tasks, close } = connect(app.port);
  const rows: string[] = [];
  try {
    for (const size of SIZES) {
      const taskId = `bench-${size}-${Date.now()}`;
      await tasks.createTask({ taskId, workspaceId: "bench" });
      const base = `# Plan\n${"p".repeat(size - 8)}\n`;
      await plans.createPlan({ taskId, content: base });
      const append = { sent: 0, received: 0, ms: [] as number[] };
      const replace = { sent: 0, received: 0, ms: [] as number[] };
      for (let round = 0; round < ROUNDS; round++) {
        // Same starting document for both ways of making the change.
        await plans.savePlan({ taskId, content: base });
        const appendRequest = UpdatePlanRequest.fromPartial({
          taskId,
          content: FRAGMENT,
          mode: WriteMode.WRITE_MODE_APPEND,
        });
        let started = performance.now();
        const appended = await plans.updatePlan(appendRequest);
        append.ms.push(performance.now() - started);
        append.sent = bytes(UpdatePlanRequest.encode(appendRequest));
        append.received = bytes(WritePlanResponse.encode(appended));

        await plans.savePlan({ taskId, content: base });
        started = performance.now();
        const getRequest = GetPlanRequest.fromPartial({ taskId });
        const read = await plans.getPlan(getRequest);
        const replaceRequest = UpdatePlanRequest.fromPartial({
          taskId,
          content: `${read.plan?.content ?? ""}\n${FRAGMENT}`,
          mode: WriteMode.WRITE_MODE_REPLACE,
          expectedVersion: read.plan?.version,
        });
        const replaced = await plans.updatePlan(replaceRequest);
        replace.ms.push(performance.now() - started);
        replace.sent =
          bytes(GetPlanRequest.encode(getRequest)) + bytes(UpdatePlanRequest.encode(replaceRequest));
        replace.received = bytes(GetPlanResponse.encode(read)) + bytes(WritePlanResponse.encode(replaced));
      }
      const label = `${Math.round(size / 1024)} KiB`;
      rows.push(
        `| ${label} | append | ${append.sent} | ${append.received} | ${median(append.ms).toFixed(2)} |`,
        `| ${label} | read + replace | ${replace.sent} | ${replace.received} | ${median(replace.ms).toFixed(2)} |`,
        `| ${label} | ratio replace/append | ${(replace.sent / append.sent).toFixed(1)}x | ${(replace.received / append.received).toFixed(1)}x | ${(median(replace.ms) / median(append.ms)).toFixed(2)}x |`,
      );
    }
  } finally {
    close();
    await app.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const database = config.databaseUrl.startsWith("sqlite:") ? "SQLite" : "MySQL";
  process.stdout.write(
    [
      `1 KiB addition, ${ROUNDS} rounds per row, ${database}, one server on 127.0.0.1 (protobuf payload bytes per change)`,
      "",
      "| plan | how | bytes sent | bytes received | p50 ms |",
      "| --- | --- | ---: | ---: | ---: |",
      ...rows,
      "",
    ].join("\n"),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
