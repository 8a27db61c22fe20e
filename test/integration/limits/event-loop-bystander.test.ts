import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { SignJWT } from "jose";
import { statusDetailsOf } from "@taskplans/client";
import { type Clients, connect, rpcError } from "../../harness/calls/rpc";
import { planState } from "../../harness/model/plan-state";
import { checklistProgress } from "../../../src/plans/rules/checklist-progress";
import { type Replica, startReplica } from "../../harness/servers/replica";
import { randomId, startTestApp, type TestApp } from "../../harness/servers/test-app";

// Issue 54, defect 3 and the rule "no request may hold the event loop for long, whatever its input":
// each expensive call is flooded (8 in flight) while a bystander reads another task's plan, and the
// bystander's worst latency must stay within RATIO of its quiet latency measured in the same test
// (never an absolute time: the machine is shared). Before the fix, diffs ran back to back on the
// loop (0.25-0.56 s each on these revisions), so 8 in flight kept a bystander waiting seconds.
// The flooded server is the built one (dist/), in a process of its own, so that the test's clients
// (which decode the flood's answers) do not share its loop. SQLite only: the work on the loop is
// the same whatever the database.

/**
 * The bound on the bystander's worst read, as a multiple of its quiet median (about 1 ms). Measured
 * on a loaded two-core machine (BYSTANDER_MAIN pointing at the build before the fix): 8 diffs
 * 658 ms before, 46-60 ms after; 8 GetPlanChanges 897 / 39-45 ms; 8 merges 1,460 / 25-30 ms. Under
 * the whole of npm test beside other work the after-figures reached 85 ms (changes) and 169 ms
 * (the edits' 8 x 131 KB requests): 300 keeps that noise out and every before-figure in.
 */
const RATIO = 300;
const FLOOD = 8;
const UPDATED_LINES = 16_000; // 16-byte lines: 256,000 bytes, under the 262,144-byte limit

// A revision no line of which is in another (maximally different for a line diff).
function revisionText(letter: string): string {
  let text = "";
  for (let i = 0; i < UPDATED_LINES; i++) text += `${letter}${String(i).padStart(13, "0")}.\n`;
  return text;
}

// The flood's worker thread (plain JavaScript: a worker does not load TypeScript): sends n copies of
// one Connect JSON request at once, reads each answer whole, and posts back their HTTP statuses.
const FLOOD_WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const { url, body, n } = workerData;
const one = () =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body })
    .then(async (response) => { await response.arrayBuffer(); return response.status; });
Promise.all(Array.from({ length: n }, one)).then((statuses) => parentPort.postMessage(statuses));
`;

const SECRET = "event-loop-bystander-secret-0123456789";
const token = (subject: string) =>
  new SignJWT({ kind: "agent", name: subject, workspaces: ["ws-1"] })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(subject)
    .setExpirationTime("10m")
    .sign(new TextEncoder().encode(SECRET));

interface Flooded {
  readonly taskId: string;
  readonly from: string;
  readonly to: string;
}

// A task whose plan went from revision A to revision B, each of its own revision.
async function floodedTask(clients: Clients): Promise<Flooded> {
  const { plans } = clients;
  const taskId = await newTask(clients);
  const first = await plans.createPlan({ taskId, content: revisionText("A") });
  const second = await plans.updatePlan({ taskId, content: revisionText("B"), expectedVersion: 1 });
  return { taskId, from: first.revision?.id ?? "", to: second.revision?.id ?? "" };
}

// Sequential reads of the bystander's plan while `busy` runs (at least `min` of them): every latency, in ms.
async function bystanderReads(
  plans: Clients["plans"],
  taskId: string,
  busy: Promise<unknown> | null,
  min: number,
): Promise<number[]> {
  let done = busy === null;
  void busy?.finally(() => (done = true));
  const latencies: number[] = [];
  while (latencies.length < min || !done) {
    const started = performance.now();
    await plans.getPlan({ taskId });
    latencies.push(performance.now() - started);
  }
  return latencies;
}

async function newTask(clients: Clients): Promise<string> {
  const taskId = randomId("task");
  await clients.tasks.createTask({ taskId, workspaceId: "ws-1" });
  return taskId;
}

const median = (values: readonly number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

describe("a bystander's reads while expensive calls flood the replica", () => {
  let dir: string;
  let replica: Replica;
  let app: Clients;
  let flooded: Flooded;
  let bystander: string;
  let repeated: string;
  let quiet: number;
  beforeAll(async () => {
    // The concurrency limit is raised so that all 8 calls run: this suite measures the loop.
    dir = mkdtempSync(join(tmpdir(), "bystander-"));
    replica = await startReplica(
      {
        PLAN_DATABASE_URL: `sqlite:${join(dir, "plans.sqlite")}`,
        PLAN_COALESCE_WINDOW_MS: "0",
        PLAN_EXPENSIVE_CALLS_PER_CALLER: "64",
        PLAN_EXPENSIVE_CALLS_PER_REPLICA: "64",
      },
      dir,
      // BYSTANDER_MAIN: another build's dist/src/bin/main.js, to measure the code before the fix.
      null,
      process.env.BYSTANDER_MAIN ? { main: process.env.BYSTANDER_MAIN } : {},
    );
    app = connect(replica.port);
    flooded = await floodedTask(app);
    bystander = await newTask(app);
    await app.plans.createPlan({ taskId: bystander, content: "# Bystander\n\n- [ ] read me\n" });
    repeated = await newTask(app);
    await app.plans.createPlan({ taskId: repeated, content: "a".repeat(262_144) });
    await bystanderReads(app.plans, bystander, null, 20); // warm-up
    quiet = median(await bystanderReads(app.plans, bystander, null, 40));
  }, 60_000);
  afterAll(async () => {
    app.close();
    await replica.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  // `FLOOD` copies of one Connect JSON call sent at once from a worker thread (a loop of its own,
  // so that reading the flood's answers, up to 8 x 600 KB, does not delay the bystander's reads in
  // this one) while the bystander reads; its worst latency, and the flood's HTTP statuses.
  async function underFlood(method: string, body: object): Promise<{ worst: number; statuses: number[] }> {
    const url = `http://127.0.0.1:${replica.httpPort}/taskplans.v1.PlanService/${method}`;
    const worker = new Worker(FLOOD_WORKER, {
      eval: true,
      workerData: { url, body: JSON.stringify(body), n: FLOOD },
    });
    const busy = new Promise<number[]>((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
    });
    try {
      const latencies = await bystanderReads(app.plans, bystander, busy, 5);
      return { worst: Math.max(...latencies), statuses: await busy };
    } finally {
      await worker.terminate();
    }
  }

  it(`${FLOOD} concurrent DiffPlanRevisions of maximally different 256 KiB revisions`, async () => {
    const { worst, statuses } = await underFlood("DiffPlanRevisions", {
      taskId: flooded.taskId,
      fromRevisionId: flooded.from,
      toRevisionId: flooded.to,
    });
    process.stdout.write(
      `bystander under ${FLOOD} diffs: quiet ${quiet.toFixed(1)} ms, worst ${worst.toFixed(1)} ms\n`,
    );
    expect(statuses).toEqual(Array(FLOOD).fill(200));
    expect(worst).toBeLessThan(RATIO * quiet);
  }, 120_000);

  it(`${FLOOD} concurrent GetPlanChanges since the first version`, async () => {
    const { worst, statuses } = await underFlood("GetPlanChanges", {
      taskId: flooded.taskId,
      sinceVersion: 1,
    });
    process.stdout.write(`bystander under ${FLOOD} GetPlanChanges: worst ${worst.toFixed(1)} ms\n`);
    expect(statuses).toEqual(Array(FLOOD).fill(200));
    expect(worst).toBeLessThan(RATIO * quiet);
  }, 120_000);

  it(`${FLOOD} concurrent stale writes asking to merge (each refused as too different, nothing written)`, async () => {
    const before = await planState(app.plans, flooded.taskId);
    const merge = { taskId: flooded.taskId, content: revisionText("C"), expectedVersion: 1, merge: true };
    const { worst, statuses } = await underFlood("UpdatePlan", merge);
    process.stdout.write(`bystander under ${FLOOD} merges: worst ${worst.toFixed(1)} ms\n`);
    expect(statuses).toEqual(Array(FLOOD).fill(409)); // Connect's aborted
    expect(worst).toBeLessThan(RATIO * quiet);
    expect((await rpcError(app.plans.updatePlan(merge))).reason).toBe("MERGE_CONFLICT");
    expect(await planState(app.plans, flooded.taskId)).toEqual(before);
  }, 120_000);

  // Issue 56: every write counts its new content's checklist; the slowest shape marked lexes
  // (items nested 16 deep) is counted on the counting thread, not on the loop.
  it(`${FLOOD} concurrent SavePlan calls of a 256 KiB checklist nested 16 deep`, async () => {
    const taskId = await newTask(app);
    let content = "";
    for (let i = 0; content.length < 250_000; i++)
      content += `${"  ".repeat(i % 16)}- [${i % 2 ? "x" : " "}] s${i}\n`;
    const { worst, statuses } = await underFlood("SavePlan", { taskId, content });
    process.stdout.write(`bystander under ${FLOOD} checklist saves: worst ${worst.toFixed(1)} ms\n`);
    expect(statuses).toEqual(Array(FLOOD).fill(200));
    expect(worst).toBeLessThan(RATIO * quiet);
    const { checked, total } = checklistProgress(content);
    expect((await app.plans.getPlan({ taskId })).plan?.checklist).toEqual({ checked, total });
  }, 120_000);

  it(`${FLOOD} concurrent EditPlan calls whose old_text is half of a repeated letter`, async () => {
    const edit = { taskId: repeated, expectedVersion: 1, oldText: "a".repeat(131_072), newText: "b" };
    const { worst, statuses } = await underFlood("EditPlan", edit);
    process.stdout.write(`bystander under ${FLOOD} edits: worst ${worst.toFixed(1)} ms\n`);
    expect(statuses).toEqual(Array(FLOOD).fill(400)); // Connect's failed_precondition
    expect(worst).toBeLessThan(RATIO * quiet);
    const failure = await rpcError(app.plans.editPlan(edit));
    expect([failure.reason, failure.metadata.occurrences]).toEqual(["EDIT_TEXT_NOT_UNIQUE", "131073"]);
  }, 120_000);
});

describe("expensive calls past the concurrency limit", () => {
  let app: TestApp;
  let alice: Clients;
  let bob: Clients;
  let carol: Clients;
  let flooded: Flooded;
  beforeAll(async () => {
    app = await startTestApp("sqlite", {
      env: {
        PLAN_AUTH_JWT_SECRET: SECRET,
        PLAN_COALESCE_WINDOW_MS: "0",
        PLAN_EXPENSIVE_CALLS_PER_CALLER: "1",
        PLAN_EXPENSIVE_CALLS_PER_REPLICA: "2",
      },
    });
    alice = app.client(await token("alice"));
    bob = app.client(await token("bob"));
    carol = app.client(await token("carol"));
    await alice.tasks.createTask({ taskId: "limited", workspaceId: "ws-1" });
    const first = await alice.plans.createPlan({ taskId: "limited", content: revisionText("A") });
    const second = await alice.plans.updatePlan({
      taskId: "limited",
      content: revisionText("B"),
      expectedVersion: 1,
    });
    flooded = { taskId: "limited", from: first.revision?.id ?? "", to: second.revision?.id ?? "" };
  }, 60_000);
  afterAll(() => app.stop());

  const diff = (client: Clients) =>
    client.plans.diffPlanRevisions({
      taskId: flooded.taskId,
      fromRevisionId: flooded.from,
      toRevisionId: flooded.to,
    });

  // Calls `attempt` until it is refused by the limit while `holding` runs (each attempt that ran is fine).
  async function refusedWhile(holding: Promise<unknown>, attempt: () => Promise<unknown>): Promise<unknown> {
    let over = false;
    void holding.finally(() => (over = true));
    while (!over) {
      try {
        await attempt();
      } catch (error) {
        if (statusDetailsOf(error)?.errorInfo?.reason === "EXPENSIVE_CALLS_LIMITED") return error;
      }
    }
    throw new Error("never refused while the limit was held");
  }

  it("a caller's second expensive call is RESOURCE_EXHAUSTED EXPENSIVE_CALLS_LIMITED with RetryInfo; others go on", async () => {
    const holding = diff(alice);
    const error = await refusedWhile(holding, () => diff(alice));
    const details = statusDetailsOf(error);
    expect((error as { code: number }).code).toBe(8);
    expect(details?.errorInfo?.metadata).toMatchObject({ limit: "caller", limit_calls: "1" });
    expect((error as { details: string }).details).toMatch(/^You have 1 expensive call/);
    const delay = details?.retryInfo?.retryDelay;
    expect((delay?.seconds ?? 0) * 1000 + (delay?.nanos ?? 0) / 1e6).toBeGreaterThan(0);
    expect((await bob.plans.getPlan({ taskId: flooded.taskId })).plan?.version).toBe(2); // reads go on
    await holding;
    await diff(alice); // the slot is free again
  }, 60_000);

  it("past the replica's limit another caller is refused too, and a merge write refused so changes nothing", async () => {
    const before = await planState(alice.plans, flooded.taskId);
    const holding = Promise.all([diff(alice), diff(bob)]);
    const merge = () =>
      carol.plans.updatePlan({
        taskId: flooded.taskId,
        content: revisionText("C"),
        expectedVersion: 1,
        merge: true,
      });
    const error = await refusedWhile(holding, merge);
    expect(statusDetailsOf(error)?.errorInfo?.metadata).toMatchObject({ limit: "replica", limit_calls: "2" });
    expect((error as { details: string }).details).toMatch(
      /^Plan was not changed because the replica runs 2 expensive calls/,
    );
    await holding;
    expect(await planState(alice.plans, flooded.taskId)).toEqual(before);
  }, 60_000);
});
