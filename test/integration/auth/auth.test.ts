import { Metadata } from "@grpc/grpc-js";
import { SignJWT } from "jose";
import { AuthorKind, WriteMode } from "@taskplans/contract";
import { planState } from "../../harness/model/plan-state";
import { rpcError } from "../../harness/calls/rpc";
import { DATABASES, randomId, startTestApp, type TestApp } from "../../harness/servers/test-app";
import { Watcher } from "../../harness/calls/watcher";

const SECRET = "test-secret-0123456789-0123456789";

function token(
  claims: Record<string, unknown>,
  options: { key?: string; expSeconds?: number; iatSeconds?: number; nbfSeconds?: number } = {},
) {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(String(claims.name ?? "someone"))
    .setExpirationTime(now + (options.expSeconds ?? 300));
  if (options.iatSeconds !== undefined) jwt.setIssuedAt(now + options.iatSeconds);
  if (options.nbfSeconds !== undefined) jwt.setNotBefore(now + options.nbfSeconds);
  return jwt.sign(new TextEncoder().encode(options.key ?? SECRET));
}

/** Call options sending `value` as the authorization metadata, exactly as given. */
function authorization(value: string) {
  const metadata = new Metadata();
  metadata.set("authorization", value);
  return { metadata };
}

describe.each(DATABASES)("auth with bearer JWTs on $label", ({ dialect }) => {
  let app: TestApp;
  let alice: TestApp["plans"];
  let aliceTasks: TestApp["tasks"];
  let taskId: string;

  beforeAll(async () => {
    app = await startTestApp(dialect, { env: { PLAN_AUTH_JWT_SECRET: SECRET } });
    const client = app.client(await token({ kind: "user", name: "Alice", workspaces: ["ws-a"] }));
    alice = client.plans;
    aliceTasks = client.tasks;
  });
  afterAll(() => app.stop());

  beforeEach(async () => {
    taskId = randomId("task");
    await aliceTasks.createTask({ taskId, workspaceId: "ws-a" });
    await alice.savePlan({ taskId, content: "alice's plan" });
  });

  async function expectRejected(call: Promise<unknown>, code: number, reason: string) {
    const before = await planState(alice, taskId);
    const failure = await rpcError(call);
    expect([failure.code, failure.reason]).toEqual([code, reason]);
    expect(await planState(alice, taskId)).toEqual(before);
    return failure;
  }

  it("a call without a token is UNAUTHENTICATED TOKEN_MISSING", async () => {
    await expectRejected(app.plans.savePlan({ taskId, content: "anonymous" }), 16, "TOKEN_MISSING");
    await expectRejected(app.plans.getPlan({ taskId }), 16, "TOKEN_MISSING");
  });

  it("an authorization header that is present but not 'Bearer <token>' is TOKEN_INVALID, not TOKEN_MISSING", async () => {
    const valid = await token({ kind: "user", name: "Alice", workspaces: ["ws-a"] });
    // (A value with leading or trailing whitespace never arrives: HTTP/2 drops such a field, RFC 9113
    // section 8.2.1, so it reads as no header; test/unit/auth/token-verifier.test.ts covers its parsing.)
    const malformed = [
      valid, // no scheme
      `Basic ${valid}`, // another scheme
      `Bearer ${valid} ${valid}`, // text after the token
      `Bearer`, // the scheme without a token
      "", // present and empty
    ];
    for (const header of malformed) {
      const write = await expectRejected(
        app.plans.savePlan({ taskId, content: "x" }, authorization(header)),
        16,
        "TOKEN_INVALID",
      );
      expect([header, write.message]).toEqual([header, expect.stringMatching(/'Bearer <token>'/)]);
      await expectRejected(app.plans.getPlan({ taskId }, authorization(header)), 16, "TOKEN_INVALID");
    }
    // The same token in the right form is accepted.
    await app.plans.getPlan({ taskId }, authorization(`Bearer ${valid}`));
  });

  it("a token whose iat or nbf is further ahead than PLAN_AUTH_CLOCK_SKEW_MS (60 s) is TOKEN_INVALID; within it, and within it after exp, the token works", async () => {
    const alices = { kind: "user", name: "Alice", workspaces: ["ws-a"] };
    for (const early of [{ iatSeconds: 600 }, { nbfSeconds: 600 }]) {
      const client = app.client(await token(alices, early));
      const failure = await expectRejected(
        client.plans.savePlan({ taskId, content: "x" }),
        16,
        "TOKEN_INVALID",
      );
      expect([early, failure.message]).toEqual([early, expect.stringMatching(/not valid yet/)]);
    }
    // The issuer's clock 30 s ahead of the server's, or a token that expired 30 s ago: the same skew.
    for (const skewed of [{ iatSeconds: 30 }, { nbfSeconds: 30 }, { expSeconds: -30 }]) {
      const client = app.client(await token(alices, skewed));
      expect([skewed, (await client.plans.getPlan({ taskId })).plan?.content]).toEqual([
        skewed,
        "alice's plan",
      ]);
    }
  });

  it("an expired token is TOKEN_EXPIRED, a forged or malformed one TOKEN_INVALID", async () => {
    const expired = app.client(await token({ kind: "user", workspaces: ["ws-a"] }, { expSeconds: -600 }));
    await expectRejected(expired.plans.savePlan({ taskId, content: "x" }), 16, "TOKEN_EXPIRED");
    const forged = app.client(await token({ kind: "user", workspaces: ["ws-a"] }, { key: "x".repeat(40) }));
    await expectRejected(forged.plans.savePlan({ taskId, content: "x" }), 16, "TOKEN_INVALID");
    const malformed = app.client("not-a-jwt");
    await expectRejected(malformed.plans.savePlan({ taskId, content: "x" }), 16, "TOKEN_INVALID");
  });

  it("a task outside the token's workspaces is PERMISSION_DENIED before existence, disclosing nothing", async () => {
    const mallory = app.client(await token({ kind: "agent", name: "Mallory", workspaces: ["ws-b"] }));
    const denied = await expectRejected(mallory.plans.getPlan({ taskId }), 7, "TASK_NOT_REACHABLE");
    expect(denied.message).not.toContain("alice");
    await expectRejected(mallory.plans.savePlan({ taskId, content: "hijack" }), 7, "TASK_NOT_REACHABLE");
    await expectRejected(mallory.plans.listPlanRevisions({ taskId }), 7, "TASK_NOT_REACHABLE");
    // A task that does not exist looks exactly the same.
    const missing = await rpcError(mallory.plans.getPlan({ taskId: randomId("missing") }));
    expect([missing.code, missing.reason]).toEqual([7, "TASK_NOT_REACHABLE"]);
    const createElsewhere = await rpcError(
      mallory.tasks.createTask({ taskId: randomId("t"), workspaceId: "ws-a" }),
    );
    expect(createElsewhere.reason).toBe("TASK_NOT_REACHABLE");
  });

  it("WatchPlan checks reach at start exactly as GetPlan does: no token, another workspace, a missing task", async () => {
    const ended = async (stream: ReturnType<TestApp["plans"]["watchPlan"]>) => {
      const watcher = new Watcher(stream);
      const end = await watcher.ended();
      expect(watcher.changes).toEqual([]);
      return [end.code, end.reason];
    };
    expect(await ended(app.plans.watchPlan({ taskId }))).toEqual([16, "TOKEN_MISSING"]);
    const mallory = app.client(await token({ kind: "agent", name: "Mallory", workspaces: ["ws-b"] }));
    expect(await ended(mallory.plans.watchPlan({ taskId }))).toEqual([7, "TASK_NOT_REACHABLE"]);
    expect(await ended(mallory.plans.watchPlan({ taskId: randomId("missing") }))).toEqual([
      7,
      "TASK_NOT_REACHABLE",
    ]);
    // The owner watches, and sees who wrote: the token's author.
    const watcher = new Watcher(alice.watchPlan({ taskId }));
    await watcher.received(1);
    await alice.updatePlan({ taskId, content: "more", mode: WriteMode.WRITE_MODE_APPEND });
    const [, change] = await watcher.received(2);
    expect(change?.author).toEqual({ kind: AuthorKind.AUTHOR_KIND_USER, name: "Alice" });
    watcher.cancel();
  });

  it("a task deleted and re-created in another workspace is out of reach for every write, though the replica saw it reachable", async () => {
    // Alice's writes taught this replica that the task is in ws-a (the early reach check needs no query then).
    await alice.updatePlan({ taskId, content: "- alice", mode: WriteMode.WRITE_MODE_APPEND });
    await aliceTasks.deleteTask({ taskId });
    const bob = app.client(await token({ kind: "user", name: "Bob", workspaces: ["ws-b"] }));
    // Bob's task has no plan yet, so no write of his has told this replica where it now lives.
    await bob.tasks.createTask({ taskId, workspaceId: "ws-b" });
    const before = await planState(bob.plans, taskId);
    const attempts: Promise<unknown>[] = [
      alice.updatePlan({ taskId, content: "- alice again", mode: WriteMode.WRITE_MODE_APPEND }),
      alice.savePlan({ taskId, content: "alice overwrites" }),
      alice.editPlan({ taskId, expectedVersion: 1, oldText: "alice", newText: "bob" }),
      alice.deletePlan({ taskId }),
      alice.revertPlan({ taskId, revisionId: "00000000-0000-4000-8000-000000000000" }),
    ];
    for (const attempt of attempts) {
      const failure = await rpcError(attempt);
      expect([failure.code, failure.reason]).toEqual([7, "TASK_NOT_REACHABLE"]);
    }
    expect(await planState(bob.plans, taskId)).toEqual(before);
  });

  it("CreateTask answers TASK_EXISTS for a taken id whichever workspace holds it (no existence oracle)", async () => {
    const mallory = app.client(await token({ kind: "agent", name: "Mallory", workspaces: ["ws-b"] }));
    // taskId is Alice's, in ws-a, which Mallory does not reach; "mine" is Mallory's own, in ws-b.
    const mine = randomId("t");
    await mallory.tasks.createTask({ taskId: mine, workspaceId: "ws-b" });
    const answers = [];
    for (const id of [taskId, mine]) {
      const failure = await rpcError(
        mallory.tasks.createTask({ taskId: id, workspaceId: "ws-b", title: "x" }),
      );
      answers.push([
        failure.code,
        failure.reason,
        failure.message.replace(id, "<id>"),
        Object.keys(failure.metadata).sort(),
      ]);
    }
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]?.slice(0, 2)).toEqual([6, "TASK_EXISTS"]);
    const alices = await aliceTasks.getTask({ taskId });
    expect(alices.task?.workspaceId).toBe("ws-a"); // unchanged
  });

  it("CreateTask without a task_id generates one and returns it", async () => {
    const created = await aliceTasks.createTask({ workspaceId: "ws-a", title: "generated" });
    expect(created.task?.taskId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const read = await aliceTasks.getTask({ taskId: created.task?.taskId });
    expect([read.task?.title, read.task?.workspaceId]).toEqual(["generated", "ws-a"]);
    const again = await aliceTasks.createTask({ workspaceId: "ws-a" });
    expect(again.task?.taskId).not.toBe(created.task?.taskId);
  });

  it("the token decides the author; a request author is ignored", async () => {
    const agent = app.client(await token({ kind: "agent", name: "Claude", workspaces: ["ws-a"] }));
    const written = await agent.plans.savePlan({
      taskId,
      content: "by the agent",
      author: { kind: AuthorKind.AUTHOR_KIND_USER, name: "Impersonated" },
    });
    const revision = (await agent.plans.getPlanRevision({ taskId, revisionId: written.revision?.id }))
      .revision;
    expect([revision?.authorKind, revision?.authorName]).toEqual([AuthorKind.AUTHOR_KIND_AGENT, "Claude"]);
    const marked = await agent.plans.markImplementationStarted({
      taskId,
      sessionId: "s-1",
      actor: "Impersonated",
    });
    expect(marked.plan?.implementationStartedBy).toBe("Claude");
  });
});
