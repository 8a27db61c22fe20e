import { randomBytes } from "node:crypto";
import { WriteMode } from "@taskplans/contract";
import { createDatabase, type MariaDb, startMariaDb } from "../../harness/databases/mariadb";
import { type CommitCutProxy, startCommitCutProxy } from "../../harness/network/commit-cut-proxy";
import { planState } from "../../harness/model/plan-state";
import { rpcError } from "../../harness/calls/rpc";
import { startTestApp, type TestApp } from "../../harness/servers/test-app";

// Issue 54, defect 11: a write whose COMMIT was sent and never answered may have been applied; it is
// answered UNAVAILABLE COMMIT_OUTCOME_UNKNOWN, never STORAGE_UNAVAILABLE ("nothing written"), and a
// retry with the same request_id applies it exactly once. The database is crashed (kill -9, durable
// commits) with the COMMIT at a known point: a proxy between the service and MariaDB holds the
// statement, or the server's answer to it, until the crash.

const APPEND = WriteMode.WRITE_MODE_APPEND;
const UNAVAILABLE = 14;

describe("an unknown outcome is said to be unknown: MariaDB crashed with a write's COMMIT in flight", () => {
  let db: MariaDb;
  let proxy: CommitCutProxy;
  let app: TestApp;

  beforeAll(async () => {
    db = await startMariaDb({ durable: true });
    const database = `c_${randomBytes(6).toString("hex")}`;
    await createDatabase(db.port, database);
    proxy = await startCommitCutProxy(db.port);
    app = await startTestApp("mysql", {
      env: { PLAN_DATABASE_URL: `mysql://root@127.0.0.1:${proxy.port}/${database}` },
    });
  }, 120_000);
  afterAll(async () => {
    await app?.stop();
    await proxy?.close();
    await db?.stop();
  }, 60_000);

  // kill -9 of the database, then the same server started again on its datadir (crash recovery).
  const crashAndRestart = async () => {
    process.kill(db.pid, "SIGKILL");
    await db.restart();
  };
  const contentOf = async (taskId: string) => (await app.plans.getPlan({ taskId })).plan?.content;
  const occurrences = (text: string | undefined, part: string) => (text ?? "").split(part).length - 1;

  it("a COMMIT the database ran but never answered: COMMIT_OUTCOME_UNKNOWN, it was applied, and a retry with the same request_id returns the original result without applying it again", async () => {
    const { taskId } = await app.planWith("base");
    const request = { taskId, content: "## Added once", mode: APPEND, requestId: "req-answered" };
    const cut = proxy.cutNext("COMMIT", "answered");
    const answer = rpcError(app.plans.updatePlan(request));
    await cut; // the server committed and answered; the answer never reaches the service
    await crashAndRestart();
    const failure = await answer;
    expect([failure.code, failure.reason]).toEqual([UNAVAILABLE, "COMMIT_OUTCOME_UNKNOWN"]);
    expect(failure.message).toMatch(/^The write may have been applied/);
    expect(failure.message).not.toMatch(/not changed|nothing (was )?written/i);
    expect(failure.metadata.next_action).toMatch(/same request_id, never a new one/);
    // The database kept it through its crash recovery: "nothing written" would have been false.
    expect(await contentOf(taskId)).toBe("base\n\n## Added once");
    const before = await planState(app.plans, taskId);
    const retry = await app.plans.updatePlan(request);
    expect(retry.plan?.version).toBe(before.plan?.version);
    expect(before.plan?.version).toBe(2);
    expect(await planState(app.plans, taskId)).toEqual(before);
  }, 120_000);

  it("a COMMIT lost on its way (never reached the database): COMMIT_OUTCOME_UNKNOWN too (the service cannot tell), nothing applied, and the retry applies it once", async () => {
    const { taskId } = await app.planWith("base");
    const before = await planState(app.plans, taskId);
    const request = { taskId, content: "## Added by the retry", mode: APPEND, requestId: "req-unsent" };
    const cut = proxy.cutNext("COMMIT", "unsent");
    const answer = rpcError(app.plans.updatePlan(request));
    await cut;
    await crashAndRestart();
    const failure = await answer;
    expect([failure.code, failure.reason]).toEqual([UNAVAILABLE, "COMMIT_OUTCOME_UNKNOWN"]);
    expect(await planState(app.plans, taskId)).toEqual(before);
    await app.plans.updatePlan(request);
    await app.plans.updatePlan(request);
    expect(await contentOf(taskId)).toBe("base\n\n## Added by the retry");
  }, 120_000);

  it("a database gone before the COMMIT was sent: STORAGE_UNAVAILABLE, and nothing was written", async () => {
    const { taskId } = await app.planWith("base");
    const before = await planState(app.plans, taskId);
    // The write's first round trip (its locking read) held, then the crash: the service sends it
    // again on a new connection, which the stopped database refuses.
    const cut = proxy.cutNext("START TRANSACTION", "unsent");
    const answer = rpcError(
      app.plans.updatePlan({ taskId, content: "## Never", mode: APPEND, requestId: "r" }),
    );
    await cut;
    process.kill(db.pid, "SIGKILL");
    const failure = await answer;
    await db.restart();
    expect([failure.code, failure.reason]).toEqual([UNAVAILABLE, "STORAGE_UNAVAILABLE"]);
    expect(failure.message).toMatch(/^Plan was not changed because the plan store is unavailable/);
    expect(await planState(app.plans, taskId)).toEqual(before);
  }, 120_000);

  it("appends in flight when the database is killed at random: every STORAGE_UNAVAILABLE was not applied, every applied write was answered OK or COMMIT_OUTCOME_UNKNOWN, and retries with the same request_id apply each exactly once", async () => {
    const WRITERS = 8;
    const ROUNDS = 5;
    const tasks = await Promise.all(
      Array.from({ length: WRITERS }, async () => (await app.planWith("base")).taskId),
    );
    const answers: { taskId: string; fragment: string; requestId: string; reason: string }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      let stop = false;
      const writers = tasks.map(async (taskId, w) => {
        for (let i = 0; !stop; i++) {
          // Ended by a word, so that no fragment is a prefix of another ("n1" of "n10") when counted.
          const fragment = `## r${round} w${w} n${i} end`;
          const requestId = `r${round}-w${w}-n${i}`;
          const reason = await app.plans
            .updatePlan({ taskId, content: fragment, mode: APPEND, requestId })
            .then(
              () => "OK",
              async (error: unknown) => (await rpcError(Promise.reject(error))).reason || "NONE",
            );
          answers.push({ taskId, fragment, requestId, reason });
          if (reason !== "OK") return; // the database is down: this writer waits for the round's end
        }
      });
      await new Promise((resolve) => setTimeout(resolve, 150 + Math.floor(Math.random() * 250)));
      process.kill(db.pid, "SIGKILL");
      stop = true;
      await Promise.all(writers);
      await db.restart();
    }
    const contents = new Map<string, string | undefined>();
    for (const taskId of tasks) contents.set(taskId, await contentOf(taskId));
    const counted = answers.map((a) => ({ ...a, applied: occurrences(contents.get(a.taskId), a.fragment) }));
    const unexpected = counted.filter(
      (a) =>
        a.applied > 1 ||
        (a.reason === "OK" && a.applied !== 1) ||
        (a.reason === "STORAGE_UNAVAILABLE" && a.applied !== 0) ||
        !["OK", "STORAGE_UNAVAILABLE", "COMMIT_OUTCOME_UNKNOWN", "LOCK_UNAVAILABLE"].includes(a.reason),
    );
    expect(unexpected).toEqual([]);
    // Every failed write retried with its own request_id: each fragment is then there exactly once.
    for (const a of counted.filter((b) => b.reason !== "OK"))
      await app.plans.updatePlan({
        taskId: a.taskId,
        content: a.fragment,
        mode: APPEND,
        requestId: a.requestId,
      });
    for (const taskId of tasks) contents.set(taskId, await contentOf(taskId));
    expect(counted.filter((a) => occurrences(contents.get(a.taskId), a.fragment) !== 1)).toEqual([]);
    // The crashes did meet writes in flight (which reasons they got varies from run to run).
    expect(counted.filter((a) => a.reason !== "OK").length).toBeGreaterThan(0);
  }, 300_000);
});
