import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createInterface } from "node:readline";
import { type Command } from "commander";
import {
  type ImportTaskRequest,
  ImportOutcome,
  type PartialRequest,
  TaskPlansError,
  type TaskPlansClient,
} from "@taskplans/client";
import { EXIT, failureOf, Refusal } from "../failures";
import type { Output } from "../output";
import { act, type Io, wholeNumber, withCommonOptions } from "../runtime";
import { DamagedLine, readHeader, revisionOf, startOf, TaskChecksum } from "../transfer/format";
import { type Progress, progressBar } from "../transfer/progress";

const MIB = 1024 * 1024;
// Revision content per ImportTask message: a message stays well under the service's 1 MiB limit.
const MESSAGE_BYTES = 512 * 1024;

/** A task being read from the file. */
interface Pending {
  readonly taskId: string;
  readonly line: number;
  readonly revisionCount: number;
  readonly requests: PartialRequest<ImportTaskRequest>[];
  readonly checksum: TaskChecksum;
  batch: PartialRequest<ImportTaskRequest>[][number] & { revisions: { revisions: unknown[] } };
  batchBytes: number;
  revisions: number;
  bytes: number;
}

/** A task not imported: where it starts in the file, and why. */
interface NotImported {
  readonly task_id: string;
  readonly line: number;
  readonly reason: string;
  readonly message: string;
}

interface Tally {
  tasks: number;
  created: number;
  unchanged: number;
  overwritten: number;
  revisions: number;
  bytes: number;
  readonly failed: NotImported[];
}

const OUTCOME: Record<number, "created" | "unchanged" | "overwritten"> = {
  [ImportOutcome.IMPORT_OUTCOME_CREATED]: "created",
  [ImportOutcome.IMPORT_OUTCOME_UNCHANGED]: "unchanged",
  [ImportOutcome.IMPORT_OUTCOME_OVERWRITTEN]: "overwritten",
};

/**
 * `import FILE [--dry-run] [--overwrite]`: recreates the tasks of an export file, each in one
 * transaction of the service (ImportTask), byte-exact. A task already stored exactly so is
 * "unchanged", so an interrupted import is simply run again. A damaged task (bad JSON, a field of
 * the wrong kind, a missing line, a wrong checksum) is refused with its line number and nothing of
 * it is sent; the others are imported; the command then exits 1.
 */
export function addImportCommand(program: Command, io: Io): void {
  withCommonOptions(
    program.command("import").description("recreate the tasks of an export file (operators only)"),
  )
    .argument("<file>", "an export file, - for stdin")
    .option("--dry-run", "check and compare only: say what would be done, change nothing")
    .option("--overwrite", "replace a task that exists with other content (else IMPORT_CONFLICT)")
    .option("--parallel <n>", "tasks imported at once", "4")
    .action(
      act(io, async ({ out, client }, [file = "-"], options) => {
        const started = performance.now();
        const flags = { overwrite: options.overwrite === true, dryRun: options.dryRun === true };
        const input = file === "-" ? io.stdin : createReadStream(file);
        const fileBytes = file === "-" ? null : (await stat(file)).size;
        const tally: Tally = {
          tasks: 0,
          created: 0,
          unchanged: 0,
          overwritten: 0,
          revisions: 0,
          bytes: 0,
          failed: [],
        };
        const service = client();
        const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
        let lineNumber = 0;
        // Drawn once the header has said how many tasks there are (a started bar keeps a timer).
        let bar: Progress = { update: () => undefined, stop: () => undefined };
        let pending: Pending | null = null;
        let skipping = false;
        let trailer = false;
        const parallel = wholeNumber(options.parallel, "--parallel") || 1;
        const inFlight = new Set<Promise<void>>();
        const fatal: unknown[] = [];
        const damaged = (taskId: string, at: number, problem: string) =>
          tally.failed.push({ task_id: taskId, line: at, reason: "IMPORT_FILE_DAMAGED", message: problem });
        try {
          for await (const text of lines) {
            lineNumber++;
            let record: Record<string, unknown>;
            try {
              const parsed: unknown = JSON.parse(text);
              if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
                throw new Error("not a JSON object");
              record = parsed as Record<string, unknown>;
            } catch {
              if (lineNumber === 1)
                throw fileDamaged(file, `line 1: not a JSON line (is ${file} an export file?)`);
              if (pending) damaged(pending.taskId, lineNumber, `line ${lineNumber}: not a whole JSON line`);
              else if (!skipping) damaged("", lineNumber, `line ${lineNumber}: not a whole JSON line`);
              pending = null;
              skipping = true;
              continue;
            }
            if (lineNumber === 1) {
              try {
                const header = readHeader(record, 1);
                bar = progressBar("import", header.tasks, io.stderr, io.env);
              } catch (error) {
                throw fileDamaged(file, (error as Error).message);
              }
              continue;
            }
            try {
              if (record.type === "task") {
                if (pending)
                  damaged(
                    pending.taskId,
                    lineNumber,
                    `line ${lineNumber}: task ${pending.taskId} has no end line`,
                  );
                skipping = false;
                const start = startOf(record, lineNumber, flags);
                const checksum = new TaskChecksum();
                checksum.add(`${text}\n`);
                pending = {
                  taskId: start.taskId,
                  line: lineNumber,
                  revisionCount: start.revisionCount,
                  requests: [start.request],
                  checksum,
                  batch: { revisions: { revisions: [] } },
                  batchBytes: 0,
                  revisions: 0,
                  bytes: start.request.start?.head?.plan?.contentBytes ?? 0,
                };
              } else if (record.type === "end-of-export") {
                trailer = true;
                skipping = false;
              } else if (skipping) {
                continue;
              } else if (record.type === "revision" && pending) {
                const revision = revisionOf(record, pending.taskId, lineNumber);
                pending.checksum.add(`${text}\n`);
                // The line's length bounds the revision's size in a message (JSON is never smaller).
                const size = Buffer.byteLength(text, "utf8");
                if (pending.batchBytes > 0 && pending.batchBytes + size > MESSAGE_BYTES) {
                  pending.requests.push(pending.batch);
                  pending.batch = { revisions: { revisions: [] } };
                  pending.batchBytes = 0;
                }
                pending.batch.revisions.revisions.push(revision);
                pending.batchBytes += size;
                pending.revisions++;
                pending.bytes += revision.revision?.contentBytes ?? 0;
              } else if (record.type === "end" && pending) {
                const task = pending;
                pending = null;
                if (record.task_id !== task.taskId || record.revisions !== task.revisions)
                  throw new DamagedLine(
                    lineNumber,
                    `task ${task.taskId} ends with ${task.revisions} revisions, its end line says ${String(record.revisions)}`,
                  );
                if (record.sha256 !== task.checksum.hex())
                  throw new DamagedLine(
                    lineNumber,
                    `task ${task.taskId}'s checksum does not match its lines (lines ${task.line}-${lineNumber - 1})`,
                  );
                if (task.batchBytes > 0 || task.batch.revisions.revisions.length > 0)
                  task.requests.push(task.batch);
                // Up to `parallel` tasks are imported at once (each in its own transaction).
                // An outage (exit 3) is kept and thrown here, so no import is left unawaited.
                const job: Promise<void> = importOne(service, task, tally)
                  .then(
                    () => bar.update(tally),
                    (error: unknown) => {
                      fatal.push(error);
                    },
                  )
                  .finally(() => inFlight.delete(job));
                inFlight.add(job);
                if (inFlight.size >= parallel) await Promise.race(inFlight.values());
                if (fatal.length > 0) throw fatal[0];
              } else {
                throw new DamagedLine(lineNumber, `unexpected ${String(record.type)} line`);
              }
            } catch (error) {
              if (!(error instanceof DamagedLine)) throw error;
              damaged(pending?.taskId ?? String(record.task_id ?? ""), lineNumber, error.message);
              pending = null;
              skipping = true;
            }
          }
          await Promise.all(inFlight);
          if (fatal.length > 0) throw fatal[0];
          if (lineNumber === 0) throw fileDamaged(file, "the file is empty");
          if (pending)
            damaged(
              pending.taskId,
              lineNumber,
              `line ${lineNumber}: the file ends inside task ${pending.taskId} (truncated)`,
            );
          else if (!trailer)
            damaged("", lineNumber, `line ${lineNumber}: the file has no end-of-export line (truncated)`);
        } finally {
          await Promise.all(inFlight);
          bar.stop();
        }
        summarize(out, tally, flags.dryRun, fileBytes, performance.now() - started);
        if (tally.failed.length > 0)
          throw new Refusal(
            tally.failed.every((failure) => failure.reason === "IMPORT_FILE_DAMAGED")
              ? "IMPORT_FILE_DAMAGED"
              : (tally.failed[0]?.reason ?? ""),
            `${tally.failed.length} task(s) were not imported: ${tally.failed.map((f) => `${f.task_id || "?"} (${f.message})`).join("; ")}`,
            "Fix what each says (export a damaged file again; --overwrite for IMPORT_CONFLICT) and run the import again: tasks already imported are verified, not duplicated.",
          );
      }),
    );
}

function fileDamaged(file: string, problem: string): Refusal {
  return new Refusal(
    "IMPORT_FILE_DAMAGED",
    `${file}: ${problem}; nothing was imported`,
    "Export the tasks again.",
  );
}

// One task's ImportTask stream; a refusal is noted and the import goes on, an outage ends it.
async function importOne(service: TaskPlansClient, task: Pending, tally: Tally): Promise<void> {
  try {
    const response = await service.tasks.importTask(task.requests);
    const outcome = OUTCOME[response.outcome] ?? "created";
    tally[outcome]++;
    tally.tasks++;
    tally.revisions += task.revisions;
    tally.bytes += task.bytes;
  } catch (error) {
    const failure = failureOf(error);
    if (!(error instanceof TaskPlansError) || failure.exitCode === EXIT.unavailable) throw error;
    tally.failed.push({
      task_id: task.taskId,
      line: task.line,
      reason: failure.reason,
      message: `line ${task.line}: ${failure.message}`,
    });
  }
}

function summarize(out: Output, tally: Tally, dryRun: boolean, fileBytes: number | null, ms: number): void {
  const seconds = ms / 1000;
  const rate = (n: number) => Number((n / Math.max(seconds, 0.001)).toFixed(2));
  const { failed: unordered, ...counts } = tally;
  const failed = [...unordered].sort((a, b) => a.line - b.line);
  if (out.json)
    return out.document({
      ...counts,
      dry_run: dryRun,
      failed,
      seconds: Number(seconds.toFixed(3)),
      tasks_per_second: rate(tally.tasks),
      mib_per_second: rate(tally.bytes / MIB),
      file_bytes: fileBytes,
    });
  const verb = dryRun ? "checked (dry run, nothing written)" : "imported";
  out.line(
    `${verb} ${tally.tasks} tasks: ${tally.created} ${dryRun ? "to create" : "created"}, ${tally.unchanged} unchanged, ${tally.overwritten} ${dryRun ? "to overwrite" : "overwritten"};` +
      ` ${tally.revisions} revisions, ${(tally.bytes / MIB).toFixed(2)} MiB in ${seconds.toFixed(1)} s (${rate(tally.tasks)} tasks/s, ${rate(tally.bytes / MIB)} MiB/s)`,
  );
  for (const failure of failed)
    out.note(`not imported: ${failure.task_id || "?"}: ${failure.reason}: ${failure.message}`);
}
