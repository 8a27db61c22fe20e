import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createClient, ConnectError } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { SignJWT } from "jose";
import { es } from "@taskplans/contract";
import { curl, type CurlResult } from "../../harness/calls/curl";
import { capturingLogger } from "../../harness/fixtures/capturing-logger";
import { GatedLock } from "../../harness/fixtures/gated-lock";
import { planState } from "../../harness/model/plan-state";
import { randomId, startTestApp, type TestApp } from "../../harness/servers/test-app";

// The HTTP door (docs/http.md) as its users reach it: the real curl binary against every unary RPC
// over Connect JSON, WatchPlan read over Connect streaming and gRPC-Web by connect-node clients,
// CORS, the body limit, unknown fields, and auth refused exactly as over gRPC.

/** Writes `bytes` to a new temporary file (for curl --data-binary @file); returns its path. */
function writeTemp(bytes: Buffer): string {
  const path = join(mkdtempSync(join(tmpdir(), "http-door-")), "body");
  writeFileSync(path, bytes);
  return path;
}

const SECRET = "test-secret-0123456789-0123456789";
const ORIGIN = "https://editor.example.com";

function token(claims: Record<string, unknown>, expSeconds = 300) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(String(claims.name ?? "someone"))
    .setExpirationTime(now + expSeconds)
    .sign(new TextEncoder().encode(SECRET));
}

interface ErrorBody {
  code: string;
  message: string;
  details?: { type: string; value: string; debug?: Record<string, unknown> }[];
}

/** The ErrorInfo of a Connect JSON error body, read from its `debug` copy (no base64 decoding). */
function errorInfo(result: CurlResult) {
  const body = result.json as ErrorBody;
  const info = body.details?.find((d) => d.type === "google.rpc.ErrorInfo")?.debug as
    { reason: string; domain: string; metadata: Record<string, string> } | undefined;
  return { code: body.code, message: body.message, reason: info?.reason, metadata: info?.metadata ?? {} };
}

describe("the HTTP door: the same API over Connect, gRPC-Web and curl", () => {
  let app: TestApp;
  let base: string;
  const post = (path: string, body: unknown, headers: string[] = []) =>
    curl(
      [
        "-X",
        "POST",
        `${base}/${path}`,
        "-H",
        "content-type: application/json",
        ...headers.flatMap((h) => ["-H", h]),
        "--data-binary",
        "@-",
      ],
      typeof body === "string" ? body : JSON.stringify(body),
    );

  beforeAll(async () => {
    app = await startTestApp("sqlite", { env: { PLAN_HTTP_CORS_ORIGINS: ORIGIN } });
    base = `http://127.0.0.1:${app.httpPort}`;
  });
  afterAll(() => app.stop());

  it("every unary RPC answers over Connect JSON with the proto3 JSON mapping (curl)", async () => {
    const taskId = randomId("task");
    const created = await post("taskplans.v1.TaskService/CreateTask", {
      taskId,
      workspaceId: "ws-1",
      title: "t",
    });
    expect(created.status).toBe(200);
    expect(created.headers["content-type"]).toBe("application/json");
    expect(created.headers["x-request-id"]).toMatch(/.+/);
    expect(created.json).toMatchObject({ task: { taskId, workspaceId: "ws-1", title: "t" } });

    const got = await post("taskplans.v1.TaskService/GetTask", { taskId });
    expect(got.json).toMatchObject({ task: { taskId } });

    const plan = await post("taskplans.v1.PlanService/CreatePlan", {
      taskId,
      content: "# Plan\n\n- step one",
      author: { kind: "AUTHOR_KIND_AGENT", name: "agent-1" },
    });
    expect(plan.status).toBe(200);
    // 64-bit integers are JSON strings; enums by name.
    expect(plan.json).toMatchObject({ plan: { taskId, version: "1" }, revision: { id: expect.any(String) } });
    const first = (plan.json as { revision: { id: string } }).revision.id;

    const read = await post("taskplans.v1.PlanService/GetPlan", { taskId });
    expect(read.json).toMatchObject({ plan: { version: "1", content: "# Plan\n\n- step one" } });

    // A read is also a Connect GET (idempotency_level NO_SIDE_EFFECTS).
    const message = encodeURIComponent(JSON.stringify({ taskId }));
    const viaGet = await curl([
      `${base}/taskplans.v1.PlanService/GetPlan?connect=v1&encoding=json&message=${message}`,
    ]);
    expect(viaGet.status).toBe(200);
    expect(viaGet.json).toMatchObject({ plan: { version: "1" } });

    const appended = await post("taskplans.v1.PlanService/UpdatePlan", {
      taskId,
      content: "- step two",
      mode: "WRITE_MODE_APPEND",
    });
    expect(appended.json).toMatchObject({ plan: { version: "2" } });

    const edited = await post("taskplans.v1.PlanService/EditPlan", {
      taskId,
      expectedVersion: "2",
      oldText: "step two",
      newText: "step 2",
    });
    expect(edited.json).toMatchObject({ plan: { version: "3" } });
    const afterEdit = await post("taskplans.v1.PlanService/GetPlan", { taskId });
    expect(afterEdit.json).toMatchObject({ plan: { content: "# Plan\n\n- step one\n\n- step 2" } });

    const saved = await post("taskplans.v1.PlanService/SavePlan", { taskId, content: "# Saved" });
    expect(saved.json).toMatchObject({ plan: { version: "4" } });

    const listed = await post("taskplans.v1.PlanService/ListPlanRevisions", { taskId });
    const revisions = (listed.json as { revisions: { id: string; revisionNumber: string }[] }).revisions;
    expect(revisions.length).toBeGreaterThanOrEqual(2);

    const revision = await post("taskplans.v1.PlanService/GetPlanRevision", { taskId, revisionId: first });
    const revisionVersion = (revision.json as { revision: { revisionVersion: string } }).revision
      .revisionVersion;
    expect(revision.json).toMatchObject({ revision: { id: first, content: "# Plan\n\n- step one" } });

    const changes = await post("taskplans.v1.PlanService/GetPlanChanges", { taskId, sinceVersion: "1" });
    expect((changes.json as { diff: { unifiedDiff: string } }).diff.unifiedDiff).toContain("+# Saved");

    const newest = revisions[0]?.id ?? "";
    const diff = await post("taskplans.v1.PlanService/DiffPlanRevisions", {
      taskId,
      fromRevisionId: first,
      toRevisionId: newest,
    });
    expect((diff.json as { diff: { unifiedDiff: string } }).diff.unifiedDiff).toContain("-# Plan");

    const restored = await post("taskplans.v1.PlanService/RestorePlanRevision", {
      taskId,
      revisionId: first,
      expectedVersion: "4",
      expectedRevisionVersion: revisionVersion,
    });
    expect(restored.json).toMatchObject({ status: "RESTORE_STATUS_RESTORED", plan: { version: "5" } });

    const reverted = await post("taskplans.v1.PlanService/RevertPlan", { taskId, revisionId: newest });
    expect(reverted.json).toMatchObject({ plan: { version: "6" } });
    const afterRevert = await post("taskplans.v1.PlanService/GetPlan", { taskId });
    expect(afterRevert.json).toMatchObject({ plan: { content: "# Saved" } });

    const marked = await post("taskplans.v1.PlanService/MarkImplementationStarted", {
      taskId,
      sessionId: "s-1",
      actor: "agent-1",
    });
    expect(marked.status).toBe(200);
    expect(marked.json).toMatchObject({ plan: { taskId } });

    const deleted = await post("taskplans.v1.PlanService/DeletePlan", { taskId });
    expect([deleted.status, deleted.json]).toEqual([200, {}]);
    const gone = await post("taskplans.v1.TaskService/DeleteTask", { taskId });
    expect([gone.status, gone.json]).toEqual([200, {}]);
  });

  it("docs/http.md's curl examples run as written, in order, every call answering OK", async () => {
    const doc = readFileSync(join(__dirname, "..", "..", "..", "docs", "http.md"), "utf8");
    const blocks = [...doc.matchAll(/```sh\n([\s\S]*?)```/g)].map(([, block]) => block ?? "");
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    const taskId = randomId("task-doc");
    const { stdout } = await promisify(execFile)("bash", ["-euo", "pipefail", "-c", blocks.join("\n")], {
      env: { PATH: process.env.PATH ?? "", HTTP: base, TASK: taskId },
      timeout: 60_000,
    });
    const answers = stdout
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    // Every unary RPC of both services is called by the doc (ImportTask, a client stream, is gRPC's
    // only), and each printed answer is a success.
    for (const service of [es.TaskService, es.PlanService])
      for (const method of service.methods.filter((m) => m.methodKind === "unary"))
        expect([method.name, blocks.join("\n").includes(`${service.name}/${method.name}`)]).toEqual([
          method.name,
          true,
        ]);
    expect(answers.length).toBeGreaterThanOrEqual(16);
    for (const answer of answers) expect(answer.code).toBeUndefined();
    expect(answers[0]).toMatchObject({ task: { taskId } });
    await expect(app.tasks.getTask({ taskId })).rejects.toMatchObject({ code: 5 }); // deleted at the end
  });

  it("a refusal carries the code, the message and the ErrorInfo (reason, next_action) readable in JSON; nothing changes", async () => {
    const { taskId } = await app.planWith("# Plan");
    const before = await planState(app.plans, taskId);
    const stale = await post("taskplans.v1.PlanService/UpdatePlan", {
      taskId,
      content: "x",
      mode: "WRITE_MODE_REPLACE",
      expectedVersion: "7",
    });
    expect(stale.status).toBe(409); // Connect's HTTP status for ABORTED
    const refused = errorInfo(stale);
    expect(refused.code).toBe("aborted");
    expect(refused.message).toMatch(/^Plan was not changed because /);
    expect(refused.reason).toBe("VERSION_MISMATCH");
    expect(refused.metadata.next_action).toMatch(/.+/);
    expect(refused.metadata.request_id).toBe(stale.headers["x-request-id"]);
    expect(await planState(app.plans, taskId)).toEqual(before);

    const missing = await post("taskplans.v1.PlanService/GetPlan", { taskId: randomId("nope") });
    expect([missing.status, errorInfo(missing).code, errorInfo(missing).reason]).toEqual([
      404,
      "not_found",
      "TASK_NOT_FOUND",
    ]);

    const blank = await post("taskplans.v1.PlanService/UpdatePlan", {
      taskId,
      content: "  ",
      mode: "WRITE_MODE_APPEND",
    });
    expect([errorInfo(blank).code, errorInfo(blank).reason]).toEqual(["invalid_argument", "FRAGMENT_BLANK"]);
    expect(await planState(app.plans, taskId)).toEqual(before);
  });

  it("invalid JSON and an unknown field are INVALID_ARGUMENT; nothing changes", async () => {
    const { taskId } = await app.planWith("# Plan");
    const before = await planState(app.plans, taskId);
    const unknown = await post("taskplans.v1.PlanService/UpdatePlan", {
      taskId,
      content: "x",
      mode: "WRITE_MODE_APPEND",
      colour: "red",
    });
    expect(unknown.status).toBe(400);
    expect((unknown.json as ErrorBody).code).toBe("invalid_argument");
    expect((unknown.json as ErrorBody).message).toContain("colour");
    // A method the services do not have is a plain 404.
    expect((await post("taskplans.v1.PlanService/DropPlan", { taskId })).status).toBe(404);
    const broken = await post("taskplans.v1.PlanService/UpdatePlan", `{"taskId": "${taskId}", "content": `);
    expect(broken.status).toBe(400);
    expect((broken.json as ErrorBody).code).toBe("invalid_argument");
    // Bytes that are not UTF-8 are refused, never stored as U+FFFD (the gRPC port's INVALID_UTF8).
    const notUtf8 = Buffer.concat([
      Buffer.from(`{"taskId":"${taskId}","content":"a`),
      Buffer.from([0xff, 0xfe]),
      Buffer.from(`b","mode":"WRITE_MODE_APPEND"}`),
    ]);
    const raw = await curl([
      "-X",
      "POST",
      `${base}/taskplans.v1.PlanService/UpdatePlan`,
      "-H",
      "content-type: application/json",
      "--data-binary",
      `@${writeTemp(notUtf8)}`,
    ]);
    expect([raw.status, (raw.json as ErrorBody).code]).toEqual([400, "invalid_argument"]);
    expect(await planState(app.plans, taskId)).toEqual(before);
  });

  it("a body over the size limit is refused by its length before it is read", async () => {
    const { taskId } = await app.planWith("# Plan");
    const before = await planState(app.plans, taskId);
    const huge = JSON.stringify({ taskId, content: "x".repeat(2 * 1024 * 1024), mode: "WRITE_MODE_APPEND" });
    const refused = await post("taskplans.v1.PlanService/UpdatePlan", huge);
    expect((refused.json as ErrorBody).code).toBe("resource_exhausted");
    expect(await planState(app.plans, taskId)).toEqual(before);
  });

  it("CORS answers a listed origin exactly, never with a wildcard or credentials, and nothing for others", async () => {
    const preflight = (origin: string) =>
      curl([
        "-X",
        "OPTIONS",
        `${base}/taskplans.v1.PlanService/GetPlan`,
        "-H",
        `origin: ${origin}`,
        "-H",
        "access-control-request-method: POST",
        "-H",
        "access-control-request-headers: content-type,authorization,connect-protocol-version",
      ]);
    const allowed = await preflight(ORIGIN);
    expect(allowed.status).toBeLessThan(300);
    expect(allowed.headers["access-control-allow-origin"]).toBe(ORIGIN);
    expect(allowed.headers["access-control-allow-headers"]).toContain("authorization");
    expect(allowed.headers["access-control-allow-credentials"]).toBeUndefined();
    const denied = await preflight("https://evil.example.com");
    expect(denied.headers["access-control-allow-origin"]).toBeUndefined();
    const { taskId } = await app.planWith("# Plan");
    const call = await post("taskplans.v1.PlanService/GetPlan", { taskId }, [`origin: ${ORIGIN}`]);
    expect(call.headers["access-control-allow-origin"]).toBe(ORIGIN);
    expect(call.headers["access-control-expose-headers"]).toContain("x-request-id");
  });

  it("WatchPlan streams over Connect and gRPC-Web; unary calls over gRPC-Web answer and refuse like gRPC", async () => {
    const { taskId } = await app.planWith("# Plan");
    for (const transport of [
      createConnectTransport({ baseUrl: base, httpVersion: "1.1" }),
      createGrpcWebTransport({ baseUrl: base, httpVersion: "1.1" }),
    ]) {
      const client = createClient(es.PlanService, transport);
      const read = await client.getPlan({ taskId });
      const version = read.plan?.version ?? 0n;
      const abort = new AbortController();
      const stream = client.watchPlan({ taskId, includeContent: true }, { signal: abort.signal });
      const seen: bigint[] = [];
      const reading = (async () => {
        try {
          for await (const change of stream) {
            seen.push(change.plan?.version ?? 0n);
            if (seen.length === 1) await app.plans.updatePlan({ taskId, content: "- more", mode: 2 });
            if (seen.length === 2) abort.abort();
          }
        } catch (error) {
          if (!(error instanceof ConnectError) || !abort.signal.aborted) throw error;
        }
      })();
      await reading;
      expect(seen).toEqual([version, version + 1n]);
      const refused = await client.getPlan({ taskId: randomId("nope") }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ConnectError);
      const error = refused as ConnectError;
      expect(error.code).toBe(5); // NOT_FOUND
      expect(error.findDetails(es.ErrorInfoSchema)[0]?.reason).toBe("TASK_NOT_FOUND");
    }
  });

  it("ImportTask, a client stream, imports over Connect what ExportTask exported: created, then unchanged", async () => {
    const { taskId } = await app.planWith("# Plan");
    await app.plans.updatePlan({ taskId, content: "- second", mode: 2 });
    await app.plans.updatePlan({ taskId, content: "- third \u2028 \u{1F600}", mode: 2 });
    const tasks = createClient(es.TaskService, createConnectTransport({ baseUrl: base, httpVersion: "1.1" }));
    const exported = await tasks.exportTask({ taskId });
    // The appends may coalesce into one revision (the app's window): what counts is that all came.
    expect([exported.more, BigInt(exported.revisions.length)]).toEqual([false, exported.revisionCount]);
    const before = await planState(app.plans, taskId);
    await app.tasks.deleteTask({ taskId });
    const importing = () =>
      tasks.importTask(
        (async function* () {
          yield {
            part: {
              case: "start" as const,
              value: { task: exported.task, head: exported.head, revisionCount: exported.revisionCount },
            },
          };
          yield { part: { case: "revisions" as const, value: { revisions: exported.revisions } } };
        })(),
      );
    const created = await importing();
    expect([created.outcome, created.revisions]).toEqual([es.ImportOutcome.CREATED, exported.revisionCount]);
    expect(await planState(app.plans, taskId)).toEqual(before);
    const again = await importing();
    expect(again.outcome).toBe(es.ImportOutcome.UNCHANGED);
    expect(await planState(app.plans, taskId)).toEqual(before);
  });
});

describe("the HTTP door runs the gRPC port's call scope", () => {
  const captured = capturingLogger();
  let app: TestApp;
  let base: string;
  beforeAll(async () => {
    app = await startTestApp("sqlite", { overrides: { logger: captured.logger } });
    base = `http://127.0.0.1:${app.httpPort}`;
  });
  afterAll(() => app.stop());

  it("the client's request id, one log line and the metrics with a protocol label, as over gRPC", async () => {
    const { taskId } = await app.planWith("# Plan");
    const answered = await curl([
      "-X",
      "POST",
      `${base}/taskplans.v1.PlanService/GetPlan`,
      "-H",
      "content-type: application/json",
      "-H",
      "x-request-id: http-door-request-1",
      "-d",
      JSON.stringify({ taskId }),
    ]);
    expect([answered.status, answered.headers["x-request-id"]]).toEqual([200, "http-door-request-1"]);
    const refused = await curl([
      "-X",
      "POST",
      `${base}/taskplans.v1.PlanService/UpdatePlan`,
      "-H",
      "content-type: application/json",
      "-H",
      "x-request-id: http-door-request-2",
      "-d",
      JSON.stringify({ taskId, content: " ", mode: "WRITE_MODE_APPEND" }),
    ]);
    expect(errorInfo(refused).metadata.request_id).toBe("http-door-request-2");
    const client = createClient(
      es.PlanService,
      createGrpcWebTransport({ baseUrl: base, httpVersion: "1.1" }),
    );
    await client.getPlan({ taskId });

    const entries = captured.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(entries.filter((e) => e.requestId === "http-door-request-1")).toEqual([
      expect.objectContaining({ method: "GetPlan", protocol: "connect", taskId, code: "OK", msg: "rpc" }),
    ]);
    expect(entries.filter((e) => e.requestId === "http-door-request-2")).toEqual([
      expect.objectContaining({
        method: "UpdatePlan",
        protocol: "connect",
        code: "INVALID_ARGUMENT",
        reason: "FRAGMENT_BLANK",
      }),
    ]);
    const metrics = await (await fetch(`http://127.0.0.1:${app.metricsPort}/metrics`)).text();
    expect(metrics).toMatch(
      /taskplans_rpc_duration_seconds_count\{method="GetPlan",code="OK",protocol="connect"\} 1\n/,
    );
    expect(metrics).toMatch(
      /taskplans_rpc_duration_seconds_count\{method="GetPlan",code="OK",protocol="grpc-web"\} 1\n/,
    );
    expect(metrics).toMatch(
      /taskplans_rpc_duration_seconds_count\{method="UpdatePlan",code="INVALID_ARGUMENT",protocol="connect"\} 1\n/,
    );
    expect(metrics).toMatch(
      /taskplans_rpc_duration_seconds_count\{method="CreatePlan",code="OK",protocol="grpc"\} 1\n/,
    );
  });
});

describe("the HTTP door: the deadline comes from the protocol's timeout header", () => {
  it("connect-timeout-ms bounds a write's lock wait as grpc-timeout does: LOCK_UNAVAILABLE before the 3 s wait, nothing written", async () => {
    const lock = new GatedLock();
    const app = await startTestApp("sqlite", { env: { PLAN_LOCK_WAIT_MS: "3000" }, overrides: { lock } });
    try {
      const { taskId } = await app.planWith("# Plan");
      lock.hold();
      const holding = app.plans.updatePlan({ taskId, content: "- first", mode: 2 });
      await lock.untilEntered(2); // the plan's creation, then this append, which now holds the lock
      const before = Date.now();
      const capped = await curl([
        "-X",
        "POST",
        `http://127.0.0.1:${app.httpPort}/taskplans.v1.PlanService/UpdatePlan`,
        "-H",
        "content-type: application/json",
        "-H",
        "connect-timeout-ms: 400",
        "-d",
        JSON.stringify({ taskId, content: "- second", mode: "WRITE_MODE_APPEND" }),
      ]);
      const took = Date.now() - before;
      lock.open();
      await holding;
      expect([errorInfo(capped).code, errorInfo(capped).reason]).toEqual(["unavailable", "LOCK_UNAVAILABLE"]);
      expect(took).toBeLessThan(3000);
      expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("# Plan\n\n- first");
    } finally {
      lock.open();
      await app.stop();
    }
  });
});

describe("the HTTP door with auth on: the same refusals as over gRPC", () => {
  let app: TestApp;
  let base: string;
  beforeAll(async () => {
    app = await startTestApp("sqlite", { env: { PLAN_AUTH_JWT_SECRET: SECRET } });
    base = `http://127.0.0.1:${app.httpPort}`;
  });
  afterAll(() => app.stop());

  const getPlan = (taskId: string, bearer?: string) =>
    curl([
      "-X",
      "POST",
      `${base}/taskplans.v1.PlanService/GetPlan`,
      "-H",
      "content-type: application/json",
      ...(bearer ? ["-H", `authorization: Bearer ${bearer}`] : []),
      "-d",
      JSON.stringify({ taskId }),
    ]);

  it("missing, expired and cross-workspace tokens are refused with the reasons gRPC gives", async () => {
    const alice = app.client(await token({ kind: "user", name: "Alice", workspaces: ["ws-a"] }));
    const taskId = randomId("task");
    await alice.tasks.createTask({ taskId, workspaceId: "ws-a" });
    await alice.plans.savePlan({ taskId, content: "alice's plan" });
    const valid = await getPlan(taskId, await token({ kind: "user", name: "Alice", workspaces: ["ws-a"] }));
    expect(valid.json).toMatchObject({ plan: { content: "alice's plan" } });

    const missing = errorInfo(await getPlan(taskId));
    expect([missing.code, missing.reason]).toEqual(["unauthenticated", "TOKEN_MISSING"]);
    expect(missing.metadata.next_action).toMatch(/.+/);
    const expired = errorInfo(
      await getPlan(taskId, await token({ name: "Alice", workspaces: ["ws-a"] }, -60)),
    );
    expect([expired.code, expired.reason]).toEqual(["unauthenticated", "TOKEN_EXPIRED"]);
    const bob = errorInfo(
      await getPlan(taskId, await token({ kind: "user", name: "Bob", workspaces: ["ws-b"] })),
    );
    expect([bob.code, bob.reason]).toEqual(["permission_denied", "TASK_NOT_REACHABLE"]);
  });
});
