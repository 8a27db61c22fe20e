import { Writable } from "node:stream";
import { Metadata } from "@grpc/grpc-js";
import pino from "pino";
import { WriteMode } from "@taskplans/contract";
import { bytesField, rawCall } from "../../harness/calls/raw-call";
import { rpcError } from "../../harness/calls/rpc";
import { startTestApp, type TestApp } from "../../harness/servers/test-app";

describe("operability: metrics, request ids, slow calls, message limits", () => {
  let app: TestApp;
  const lines: string[] = [];

  beforeAll(async () => {
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    app = await startTestApp("sqlite", {
      env: { PLAN_SLOW_CALL_MS: "1" },
      overrides: { logger: pino({ level: "info" }, stream) },
    });
  });
  afterAll(() => app.stop());

  it("serves Prometheus metrics on a separate port, labelled by method, code and reason, never with content or titles", async () => {
    const taskId = await app.newTask();
    await app.plans.createPlan({ taskId, content: "SECRET-CONTENT", title: "SECRET-TITLE" });
    await app.plans.updatePlan({ taskId, content: "more", mode: WriteMode.WRITE_MODE_APPEND });
    await rpcError(app.plans.updatePlan({ taskId, content: "x", mode: 9 as WriteMode }));
    const body = await (await fetch(`http://127.0.0.1:${app.metricsPort}/metrics`)).text();
    expect(body).toMatch(
      /taskplans_rpc_duration_seconds_count\{method="CreatePlan",code="OK",protocol="grpc"\} 1/,
    );
    expect(body).toMatch(
      /taskplans_rpc_duration_seconds_count\{method="UpdatePlan",code="INVALID_ARGUMENT",protocol="grpc"\} 1/,
    );
    expect(body).toMatch(/taskplans_rejections_total\{reason="INVALID_WRITE_MODE"\} 1/);
    expect(body).toMatch(/taskplans_revisions_total\{kind="new"\} 1/);
    expect(body).toMatch(/taskplans_revisions_total\{kind="coalesced"\} 1/);
    expect(body).toMatch(/taskplans_lock_wait_seconds_count\{obtained="true"\} 2/);
    expect(body).toMatch(/taskplans_transaction_duration_seconds_count\{outcome="committed"\} 2/);
    expect(body).toMatch(/taskplans_plan_size_bytes_count 2/);
    // Writes by mode: the refused mode never reached the pipeline's lock, so it is no write.
    expect(body).toMatch(/taskplans_writes_total\{mode="create",outcome="committed"\} 1\n/);
    expect(body).toMatch(/taskplans_writes_total\{mode="append",outcome="committed"\} 1\n/);
    expect(body).toMatch(/taskplans_writes_total\{mode="replace",outcome="failed"\} 0\n/);
    expect(body).toMatch(/process_cpu_seconds_total/);
    expect(body).not.toMatch(/SECRET|task-/);
  });

  it("takes the request id from x-request-id and logs it with the method and task id; slow calls are logged at warn", async () => {
    const taskId = await app.newTask();
    const metadata = new Metadata();
    metadata.set("x-request-id", "trace-42");
    await app.plans.savePlan({ taskId, content: "plan body" }, { metadata });
    const entry = lines.map((l) => JSON.parse(l)).find((l) => l.requestId === "trace-42");
    expect(entry).toMatchObject({ method: "SavePlan", taskId, code: "OK", msg: "slow rpc", level: 40 });
    expect(lines.join("")).not.toContain("plan body");
  });

  it("echoes the request id in the response headers of answered and rejected calls, or a new one", async () => {
    const taskId = await app.newTask();
    await app.plans.savePlan({ taskId, content: "plan body" });
    const getPlan = (id: string) => bytesField(1, Buffer.from(id));
    const withId = (requestId: string) => {
      const metadata = new Metadata();
      metadata.set("x-request-id", requestId);
      return metadata;
    };
    const path = "/taskplans.v1.PlanService/GetPlan";
    const answered = await rawCall(app.port, path, getPlan(taskId), withId("trace-ok"));
    expect(answered.error).toBeNull();
    expect(answered.headers?.get("x-request-id")).toEqual(["trace-ok"]);
    const rejected = await rawCall(app.port, path, getPlan("missing-task"), withId("trace-no"));
    expect(rejected.error?.code).toBe(5);
    expect(rejected.headers?.get("x-request-id")).toEqual(["trace-no"]);
    const generated = await rawCall(app.port, path, getPlan(taskId));
    expect(String(generated.headers?.get("x-request-id")[0])).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("counts writes by mode and outcome: committed, unchanged (nothing to change), failed (nothing written)", async () => {
    const taskId = await app.newTask();
    const created = await app.plans.createPlan({ taskId, content: "- one\n- two\n" });
    await app.plans.editPlan({
      taskId,
      expectedVersion: created.plan?.version,
      oldText: "one",
      newText: "1",
      acknowledgeReduction: false,
    });
    const stale = { taskId, content: "# Other\n", mode: WriteMode.WRITE_MODE_REPLACE, expectedVersion: 1 };
    expect((await rpcError(app.plans.updatePlan(stale))).reason).toBe("VERSION_MISMATCH");
    await app.plans.markImplementationStarted({ taskId, sessionId: "s-1", actor: "" });
    await app.plans.markImplementationStarted({ taskId, sessionId: "s-2", actor: "" }); // first mark wins
    await app.plans.deletePlan({ taskId });
    const body = await (await fetch(`http://127.0.0.1:${app.metricsPort}/metrics`)).text();
    const writes = (mode: string, outcome: string) =>
      body.match(
        new RegExp(`^taskplans_writes_total\\{mode="${mode}",outcome="${outcome}"\\} (\\d+)$`, "m"),
      )?.[1];
    expect({
      edit: writes("edit", "committed"),
      staleReplace: writes("replace", "failed"),
      mark: writes("mark", "committed"),
      markAgain: writes("mark", "unchanged"),
      delete: writes("delete", "committed"),
      restore: writes("restore", "committed"),
    }).toEqual({ edit: "1", staleReplace: "1", mark: "1", markAgain: "1", delete: "1", restore: "0" });
  });

  it("answers RESOURCE_EXHAUSTED for a request above the message limit, and nothing is stored", async () => {
    const taskId = await app.newTask();
    const failure = await rpcError(app.plans.savePlan({ taskId, content: "x".repeat(2 * 1024 * 1024) }));
    expect(failure.code).toBe(8);
    expect((await rpcError(app.plans.getPlan({ taskId }))).reason).toBe("PLAN_NOT_FOUND");
  });
});
