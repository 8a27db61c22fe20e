import { open, rename, rm } from "node:fs/promises";
import { type Command } from "commander";
import { TaskPlansError, type TaskPlansClient } from "@taskplans/client";
import { act, type Io, wholeNumber, withCommonOptions } from "../runtime";
import {
  endLine,
  headerLine,
  line,
  revisionLine,
  TaskChecksum,
  taskLine,
  trailerLine,
} from "../transfer/format";
import { type Done, progressBar } from "../transfer/progress";

const MIB = 1024 * 1024;
// A task that keeps changing while it is read is read again this many times at most.
const EXPORT_ATTEMPTS = 5;

/** Every task id the caller reaches (of `workspaceId` when given), in id order. */
async function listTaskIds(client: TaskPlansClient, workspaceId: string): Promise<string[]> {
  const ids: string[] = [];
  let pageToken = "";
  do {
    const page = await client.tasks.listTasks({ workspaceId, pageSize: 1000, pageToken });
    ids.push(...page.tasks.map((task) => task.taskId));
    pageToken = page.nextPageToken;
  } while (pageToken !== "");
  return ids;
}

/**
 * One task's lines (task, revisions, end), every page read at the first page's snapshot; a task
 * that changed between pages (EXPORT_CHANGED) is read again from its first page.
 */
async function exportTask(
  client: TaskPlansClient,
  taskId: string,
): Promise<{ text: string; revisions: number; bytes: number }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await readTask(client, taskId);
    } catch (error) {
      if (
        attempt >= EXPORT_ATTEMPTS ||
        !(error instanceof TaskPlansError) ||
        error.reason !== "EXPORT_CHANGED"
      )
        throw error;
    }
  }
}

async function readTask(
  client: TaskPlansClient,
  taskId: string,
): Promise<{ text: string; revisions: number; bytes: number }> {
  const checksum = new TaskChecksum();
  const parts: string[] = [];
  const add = (text: string) => {
    checksum.add(text);
    parts.push(text);
  };
  let page = await client.tasks.exportTask({ taskId });
  if (!page.task) throw new Error(`the service sent task ${taskId} without its task`);
  add(line(taskLine(page.task, page.head, page.revisionCount)));
  let revisions = 0;
  let bytes = page.head?.plan?.contentBytes ?? 0;
  for (;;) {
    for (const revision of page.revisions) {
      add(line(revisionLine(revision)));
      revisions++;
      bytes += revision.revision?.contentBytes ?? 0;
    }
    const last = page.revisions[page.revisions.length - 1]?.revision?.revisionNumber;
    if (!page.more || last === undefined) break;
    page = await client.tasks.exportTask({ taskId, afterRevisionNumber: last, snapshot: page.snapshot });
  }
  parts.push(endLine(taskId, revisions, checksum.hex()));
  return { text: parts.join(""), revisions, bytes };
}

/**
 * `export [TASK...] [--workspace W] [-f FILE|-]`: the tasks (named, or every task of the workspace,
 * or every task the caller reaches) with their plans and whole histories, as a versioned
 * line-delimited file (docs/planctl.md, "Export and import"). A file is written under FILE.partial
 * and renamed when complete, so an interrupted export leaves no FILE behind.
 */
export function addExportCommand(program: Command, io: Io): void {
  withCommonOptions(
    program.command("export").description("write tasks with their plans and whole histories to a file"),
  )
    .argument("[task...]", "task ids (default: every task of --workspace, or every task you reach)")
    .option("--workspace <id>", "every task of this workspace")
    .option("-f, --file <file>", "the file to write, - for stdout", "-")
    .option("--parallel <n>", "tasks read at once", "4")
    .action(
      act(io, async ({ out, client }, taskIds, options) => {
        const started = performance.now();
        const file = String(options.file);
        const toStdout = file === "-";
        const service = client();
        const ids =
          taskIds.length > 0 ? [...taskIds] : await listTaskIds(service, String(options.workspace ?? ""));
        const partial = `${file}.partial`;
        const handle = toStdout ? null : await open(partial, "w", 0o600);
        const write = async (text: string) => {
          if (handle) await handle.write(text);
          else io.stdout.write(text);
        };
        const done = { tasks: 0, revisions: 0, bytes: 0 };
        const bar = progressBar("export", ids.length, io.stderr, io.env);
        try {
          await write(headerLine(ids.length, new Date()));
          // Up to `parallel` tasks are read at once; they are written in order, each whole.
          const parallel = wholeNumber(options.parallel, "--parallel") || 1;
          const reading: Promise<{ text: string; revisions: number; bytes: number }>[] = [];
          let next = 0;
          const readNext = () => {
            const taskId = ids[next++];
            if (taskId !== undefined) reading.push(exportTask(service, taskId));
          };
          while (reading.length < parallel && next < ids.length) readNext();
          for (let promise = reading.shift(); promise !== undefined; promise = reading.shift()) {
            readNext();
            const task = await promise;
            await write(task.text);
            done.tasks++;
            done.revisions += task.revisions;
            done.bytes += task.bytes;
            bar.update(done);
          }
          await write(trailerLine(ids.length));
          bar.stop();
          if (handle) {
            await handle.close();
            await rename(partial, file);
          }
        } catch (error) {
          bar.stop();
          if (handle) {
            await handle.close();
            await rm(partial, { force: true });
          }
          throw error;
        }
        report(out, io, toStdout, file, done, performance.now() - started);
      }),
    );
}

// The summary: on stdout, or on stderr when stdout carries the export itself.
function report(
  out: import("../output").Output,
  io: Io,
  toStdout: boolean,
  file: string,
  done: Done,
  ms: number,
): void {
  const seconds = ms / 1000;
  const summary = {
    file: toStdout ? "-" : file,
    tasks: done.tasks,
    revisions: done.revisions,
    bytes: done.bytes,
    seconds: Number(seconds.toFixed(3)),
    tasks_per_second: Number((done.tasks / Math.max(seconds, 0.001)).toFixed(1)),
    mib_per_second: Number((done.bytes / MIB / Math.max(seconds, 0.001)).toFixed(2)),
  };
  const text = out.json
    ? JSON.stringify(summary)
    : `exported ${summary.tasks} tasks, ${summary.revisions} revisions, ${(done.bytes / MIB).toFixed(2)} MiB of plan text` +
      ` to ${summary.file} in ${seconds.toFixed(1)} s (${summary.tasks_per_second} tasks/s, ${summary.mib_per_second} MiB/s)`;
  (toStdout ? io.stderr : io.stdout).write(`${text}\n`);
}
