import { randomBytes } from "node:crypto";
import { AuthorKind, WriteMode } from "@taskplans/client";
import type { CallFailure } from "./calls";
import { mixedWrite } from "./mixed-writes";
import { markdown } from "./random";
import { partialRead, revisionReads, verifiedRead } from "./reads";
import { composeAppend, SoakTask, type TaskKind, utf8 } from "./tasks";
import { verifyTask } from "./verify";
import { SoakWatcher } from "./watchers";
import type { LatencyBook } from "./latency";
import type { LoadContext, LoadCounts } from "./types";

const OPERATIONS = {
  ledgerAppend: 30,
  mixedWrite: 25,
  contendedAppend: 12,
  readFull: 8,
  readPartial: 10,
  revisions: 10,
  readContended: 3,
};

/**
 * The mixed load: `workers` loops, each running one operation at a time on a free task of the
 * chosen kind; watchers on a share of the tasks; ledger and contended tasks verified and deleted
 * (then replaced) once their plan reaches the rotation size, so a long soak reaches a steady state.
 */
export class SoakLoad {
  readonly tasks = new Map<string, SoakTask>();
  readonly watchers: SoakWatcher[] = [];
  /** Watchers stopped when their task was rotated out (their figures count in the summary). */
  readonly pastWatchers: SoakWatcher[] = [];
  readonly counts: LoadCounts = {
    tasksCreated: 0,
    tasksDeleted: 0,
    verifiedTasks: 0,
    ledgerFragments: 0,
    contendedFragments: 0,
    mixedWrites: 0,
    verifiedReads: 0,
  };
  /** Acknowledged writes per 100 ms since the start (for "writes per prune interval"). */
  readonly writeBins: number[] = [];
  private readonly runId = randomBytes(3).toString("hex");
  private serial = 0;
  private stopping = false;
  private loops: Promise<void>[] = [];
  private readonly started = Date.now();
  private injected = false;

  constructor(
    private readonly ctx: LoadContext,
    private readonly book: LatencyBook,
    private readonly serverCount: number,
  ) {}

  /** Creates the tasks and watchers, then starts the worker loops. */
  async start(): Promise<void> {
    const s = this.ctx.settings;
    const kinds: TaskKind[] = [
      ...Array<TaskKind>(s.ledgerTasks).fill("ledger"),
      ...Array<TaskKind>(s.mixedTasks).fill("mixed"),
      ...Array<TaskKind>(s.contendedTasks).fill("contended"),
    ];
    for (const kind of kinds) await this.createTask(kind);
    // Watchers: content streams on mixed tasks, metadata streams on the others, across replicas.
    const order = [...this.of("mixed"), ...this.of("contended"), ...this.of("ledger")];
    for (let i = 0; i < Math.min(s.watchers, order.length); i++) this.watch(order[i] as SoakTask, i);
    this.loops = Array.from({ length: s.workers }, () => this.loop());
  }

  /** Stops the loops after their current operation; resolves when all are idle. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.loops);
  }

  /** Live tasks of one kind (retired ones included). */
  of(kind: TaskKind): SoakTask[] {
    return [...this.tasks.values()].filter((task) => task.kind === kind);
  }

  /** Verifies every live task as the final check. */
  async verifyAll(): Promise<void> {
    for (const task of this.tasks.values()) {
      await verifyTask(this.ctx, task);
      this.counts.verifiedTasks++;
    }
  }

  /** Acknowledgement bookkeeping shared by every write. */
  noteAck(): void {
    const bin = Math.floor((this.ctx.now() - this.started) / 100);
    while (this.writeBins.length <= bin) this.writeBins.push(0);
    this.writeBins[bin] = (this.writeBins[bin] ?? 0) + 1;
  }

  private watch(task: SoakTask, i: number): void {
    const client = this.ctx.calls.clientFor(i, this.serverCount);
    const watcher = new SoakWatcher(
      task,
      client,
      task.kind === "mixed" && i % 2 === 0,
      this.book,
      this.ctx.findings,
    );
    this.watchers.push(watcher);
    watcher.start();
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      const op = this.ctx.random.weighted(OPERATIONS);
      try {
        const ran = await this.runOperation(op);
        if (!ran) await new Promise((resolve) => setTimeout(resolve, 1));
      } catch {
        // SoakCalls recorded it (a finding unless the scenario expects it); a loop never dies of a call.
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
  }

  /** Runs one operation; false when no task was free for it. */
  private async runOperation(op: keyof typeof OPERATIONS): Promise<boolean> {
    if (
      this.ctx.settings.inject === "lost-write" &&
      !this.injected &&
      this.ctx.now() - this.started > this.ctx.settings.durationMs / 2
    ) {
      return this.injectLostWrite();
    }
    switch (op) {
      case "ledgerAppend":
        return this.withFree("ledger", (task) => this.ledgerAppend(task));
      case "mixedWrite":
        return this.withFree("mixed", async (task) => {
          if (!(await mixedWrite(this.ctx, task))) return;
          this.counts.mixedWrites++;
          this.noteAck();
          if (task.latestRevision >= this.ctx.settings.rotateRevisions) await this.rotate(task);
        });
      case "contendedAppend":
        return this.contendedAppend();
      case "readFull":
        return this.withFree(this.ctx.random.next() < 0.5 ? "ledger" : "mixed", async (task) => {
          await verifiedRead(this.ctx, task);
          this.counts.verifiedReads++;
        });
      case "readPartial":
        return this.withFree(this.ctx.random.next() < 0.5 ? "ledger" : "mixed", async (task) => {
          await partialRead(this.ctx, task);
          this.counts.verifiedReads++;
        });
      case "revisions":
        return this.any(async (task) => revisionReads(this.ctx, task));
      case "readContended":
        return this.any(async (task) => {
          await this.ctx.calls.run(
            "GetPlan (contended)",
            (c) => c.plans.getPlan({ taskId: task.id }),
            (failure) => failure.code === 5 && task.retired,
          );
        }, "contended");
    }
  }

  /** Runs `work` on a random task of `kind` with nothing in flight, holding it meanwhile. */
  private async withFree(kind: TaskKind, work: (task: SoakTask) => Promise<void>): Promise<boolean> {
    const candidates = this.of(kind);
    for (let attempt = 0; attempt < 8; attempt++) {
      const task = this.ctx.random.pick(candidates);
      if (!task || task.inFlight > 0 || task.retired) continue;
      task.inFlight++;
      try {
        await work(task);
      } finally {
        task.inFlight--;
      }
      return true;
    }
    return false;
  }

  /**
   * Runs an unverified read on any live task (of `kind`), also one being written; it holds nothing,
   * so the task may be deleted meanwhile (NOT_FOUND is then expected).
   */
  private async any(work: (task: SoakTask) => Promise<void>, kind?: TaskKind): Promise<boolean> {
    const candidates = kind ? this.of(kind) : [...this.tasks.values()];
    const task = this.ctx.random.pick(candidates.filter((t) => !t.retired));
    if (!task) return false;
    await work(task);
    return true;
  }

  private async ledgerAppend(task: SoakTask): Promise<void> {
    const fragment = markdown(
      this.ctx.random,
      `${task.id}#${task.fragments.length}`,
      this.ctx.random.int(80, 1200),
    );
    const expected = composeAppend(task.content ?? "", fragment);
    const requestId = this.ctx.random.next() < 0.25 ? task.nextRequestId() : undefined;
    task.expect(expected);
    const response = await this.ctx.calls.run("UpdatePlan append (ledger)", (c) =>
      c.plans.updatePlan({
        taskId: task.id,
        content: fragment,
        mode: WriteMode.WRITE_MODE_APPEND,
        author: { kind: AuthorKind.AUTHOR_KIND_AGENT, name: "ledger-agent" },
        ...(requestId ? { requestId } : {}),
      }),
    );
    task.acknowledge(response, { content: expected }, this.ctx.findings, this.ctx.now());
    task.fragments.push(fragment);
    if (requestId) task.requestIds++;
    this.counts.ledgerFragments++;
    this.noteAck();
    if (utf8(expected) >= this.ctx.settings.rotateBytes) await this.rotate(task);
  }

  private async contendedAppend(): Promise<boolean> {
    const writers = this.ctx.settings.contendedWriters;
    const candidates = this.of("contended").filter((t) => !t.retired && t.inFlight < writers);
    const task = this.ctx.random.pick(candidates);
    if (!task) return false;
    // A free writer seat: each seat writes its fragments one after the other, so they keep its order.
    const seat = [...Array(writers).keys()].find((w) => !task.busySeats.has(w));
    if (seat === undefined) return false;
    task.busySeats.add(seat);
    task.inFlight++;
    const seq = task.nextSeq.get(seat) ?? 0;
    const marker = `⟦${task.id}:w${seat}:${seq}⟧`;
    const fragment = `- ${marker} ${markdown(this.ctx.random, "c", this.ctx.random.int(60, 400)).replace(/^## /, "")}`;
    try {
      const response = await this.ctx.calls.run("UpdatePlan append (contended)", (c) =>
        c.plans.updatePlan({
          taskId: task.id,
          content: fragment,
          mode: WriteMode.WRITE_MODE_APPEND,
          author: { kind: AuthorKind.AUTHOR_KIND_AGENT, name: `writer-${seat % 2}` },
        }),
      );
      task.markers.set(marker, { writer: seat, seq });
      task.acknowledge(response, { content: null }, this.ctx.findings, this.ctx.now());
      this.counts.contendedFragments++;
      this.noteAck();
    } catch (error) {
      if ((error as CallFailure).outcomeUnknown) task.unknown.add(marker);
      throw error;
    } finally {
      task.nextSeq.set(seat, seq + 1);
      task.busySeats.delete(seat);
      task.inFlight--;
    }
    if (task.contentBytes >= this.ctx.settings.rotateBytes && !task.retired) await this.rotate(task);
    return true;
  }

  /** Retires `task`, starts its replacement (and moves its watcher), then verifies and deletes it. */
  private async rotate(task: SoakTask): Promise<void> {
    task.retired = true;
    const replacement = await this.createTask(task.kind);
    const index = this.watchers.findIndex((w) => w.task === task);
    if (index >= 0) {
      this.watchers[index]?.stop();
      this.pastWatchers.push(...this.watchers.splice(index, 1));
      this.watch(replacement, index);
    }
    while (task.inFlight > (task.kind === "contended" ? 0 : 1))
      await new Promise((resolve) => setTimeout(resolve, 5));
    await verifyTask(this.ctx, task);
    this.counts.verifiedTasks++;
    await this.ctx.calls.run("DeleteTask", (c) => c.tasks.deleteTask({ taskId: task.id }));
    this.tasks.delete(task.id);
    this.counts.tasksDeleted++;
  }

  private async createTask(kind: TaskKind): Promise<SoakTask> {
    const s = this.ctx.settings;
    const keepAcksMs = Math.max(120_000, s.retention.maxAgeMs + s.retention.pruneIntervalMs + 60_000);
    const task = new SoakTask(`soak-${this.runId}-${kind}-${this.serial++}`, kind, keepAcksMs);
    await this.ctx.calls.run("CreateTask", (c) =>
      c.tasks.createTask({ taskId: task.id, workspaceId: "soak" }),
    );
    const content =
      kind === "mixed" ? markdown(this.ctx.random, `${task.id}.0`, 600) : `# ${kind} ${task.id}\n`;
    const response = await this.ctx.calls.run("CreatePlan", (c) =>
      c.plans.createPlan({
        taskId: task.id,
        content,
        author: { kind: AuthorKind.AUTHOR_KIND_AGENT, name: "planner" },
      }),
    );
    task.acknowledge(response, { content }, this.ctx.findings, this.ctx.now());
    this.noteAck();
    this.tasks.set(task.id, task);
    this.counts.tasksCreated++;
    return task;
  }

  /**
   * SOAK_INJECT=lost-write: records a ledger fragment as acknowledged without sending it, as a
   * server that lost an acknowledged append would look; the task is then retired and verified.
   */
  private injectLostWrite(): Promise<boolean> {
    this.injected = true;
    return this.withFree("ledger", async (task) => {
      const fragment = markdown(this.ctx.random, `${task.id}#${task.fragments.length} (never sent)`, 200);
      task.content = composeAppend(task.content ?? "", fragment);
      task.fragments.push(fragment);
      process.stdout.write(`soak: SOAK_INJECT=lost-write: ${task.id} records a fragment it never sent\n`);
      await this.rotate(task);
    });
  }
}
