import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { planState } from "../../harness/model/plan-state";
import {
  checkHealth,
  fileByFilename,
  healthClient,
  listServices,
  reflectionClient,
} from "../../harness/calls/grpc-clients";
import { GatedLock } from "../../harness/fixtures/gated-lock";
import { startMariaDb, createDatabase } from "../../harness/databases/mariadb";
import { waitFor } from "../../harness/servers/processes";
import { connect, rpcError } from "../../harness/calls/rpc";
import { DATABASES, startTestApp } from "../../harness/servers/test-app";

describe("server operability", () => {
  it("serves grpc.health.v1 (SERVING) and reflection listing every service", async () => {
    const app = await startTestApp("sqlite");
    const health = healthClient(app.port);
    const reflection = reflectionClient(app.port);
    try {
      expect(await checkHealth(health)).toBe("SERVING");
      expect(await checkHealth(health, "taskplans.v1.PlanService")).toBe("SERVING");
      expect((await listServices(reflection)).sort()).toEqual([
        "grpc.health.v1.Health",
        "taskplans.v1.PlanService",
        "taskplans.v1.TaskService",
      ]);
      // Dependencies resolve too (grpcurl and ghz fetch every import by name).
      expect(await fileByFilename(reflection, "taskplans/v1/plan.proto")).toBeGreaterThan(0);
      expect(await fileByFilename(reflection, "google/protobuf/timestamp.proto")).toBeGreaterThan(0);
      // Health as a valid descriptor, and google.rpc so clients can decode error details.
      expect(await fileByFilename(reflection, "health/v1/health.proto")).toBeGreaterThan(0);
      expect(await fileByFilename(reflection, "google/rpc/error_details.proto")).toBeGreaterThan(0);
    } finally {
      health.close();
      reflection.close();
      await app.stop();
    }
  });

  it("reports NOT_SERVING and fails calls with UNAVAILABLE STORAGE_UNAVAILABLE while MariaDB is down", async () => {
    const mariadb = await startMariaDb();
    await createDatabase(mariadb.port, "plans");
    const app = await startTestApp("sqlite", {
      env: { PLAN_DATABASE_URL: mariadb.urlFor("plans"), PLAN_HEALTH_INTERVAL_MS: "100" },
    });
    const health = healthClient(app.port);
    try {
      const taskId = await app.newTask();
      await app.plans.savePlan({ taskId, content: "before the outage" });
      await mariadb.stop();
      await waitFor("NOT_SERVING", async () => (await checkHealth(health)) === "NOT_SERVING", 10_000);
      const write = await rpcError(app.plans.savePlan({ taskId, content: "during the outage" }));
      expect([write.code, write.reason]).toEqual([14, "STORAGE_UNAVAILABLE"]);
      expect(write.message).not.toMatch(/ECONNREFUSED|mysql|127\.0\.0\.1/i);
      const read = await rpcError(app.plans.getPlan({ taskId }));
      expect([read.code, read.reason]).toEqual([14, "STORAGE_UNAVAILABLE"]);
    } finally {
      health.close();
      await app.stop();
      await mariadb.stop();
    }
  });

  it("on stop, reports NOT_SERVING, lets an in-flight write finish, then refuses new calls", async () => {
    const lock = new GatedLock();
    const app = await startTestApp("sqlite", { overrides: { lock } });
    const health = healthClient(app.port);
    const statuses: string[] = [];
    const watch = health.Watch?.({ service: "" }) as NodeJS.EventEmitter & { cancel(): void };
    watch.on("data", (update: { status: string }) => statuses.push(String(update.status)));
    watch.on("error", () => undefined);
    const taskId = await app.newTask();
    lock.hold();
    const inFlight = app.plans.savePlan({ taskId, content: "written during the drain" });
    await lock.untilEntered(1);
    const stopped = app.stop();
    await waitFor("NOT_SERVING", async () => statuses.includes("NOT_SERVING"), 5_000);
    expect(statuses).toEqual(["SERVING", "NOT_SERVING"]);
    watch.cancel(); // the watch is itself an in-flight call the drain would wait for
    lock.open();
    await expect(inFlight).resolves.toMatchObject({ plan: { version: 1 } });
    await stopped;
    const late = connect(app.port);
    expect((await rpcError(late.plans.getPlan({ taskId }))).code).toBe(14);
    late.close();
    health.close();
  });
});

describe.each(DATABASES)("lock and fence failures on $label", ({ dialect }) => {
  it("a write whose lock lease was lost before commit is ABORTED WRITE_CONFLICT and writes nothing", async () => {
    const lock = new GatedLock();
    const app = await startTestApp(dialect, { overrides: { lock } });
    try {
      const taskId = await app.newTask();
      await app.plans.savePlan({ taskId, content: "committed" });
      const before = await planState(app.plans, taskId);
      lock.loseLease = true;
      const failure = await rpcError(app.plans.savePlan({ taskId, content: "after the lease expired" }));
      expect([failure.code, failure.reason]).toEqual([10, "WRITE_CONFLICT"]);
      lock.loseLease = false;
      expect(await planState(app.plans, taskId)).toEqual(before);
      expect(app.events.typesFor(taskId)).toEqual(["plan.created", "plan.revision.created"]);
    } finally {
      await app.stop();
    }
  });

  it("a lock not obtained within PLAN_LOCK_WAIT_MS is UNAVAILABLE LOCK_UNAVAILABLE and writes nothing", async () => {
    const lock = new GatedLock();
    const app = await startTestApp(dialect, { env: { PLAN_LOCK_WAIT_MS: "100" }, overrides: { lock } });
    try {
      const taskId = await app.newTask();
      await app.plans.savePlan({ taskId, content: "first" });
      const before = await planState(app.plans, taskId);
      lock.hold();
      const holder = app.plans.savePlan({ taskId, content: "holder" });
      await lock.untilEntered(2);
      const failure = await rpcError(app.plans.savePlan({ taskId, content: "waiter" }));
      expect([failure.code, failure.reason]).toEqual([14, "LOCK_UNAVAILABLE"]);
      expect(lock.entered).toBe(2);
      lock.open();
      await holder;
      const after = await planState(app.plans, taskId);
      expect(after.plan?.content).toBe("holder");
      expect(after.plan?.version).toBe((before.plan?.version ?? 0) + 1);
    } finally {
      await app.stop();
    }
  });

  it("data, versions and numbering survive a restart; migrations replay as a no-op", async () => {
    const dir = mkdtempSync(join(tmpdir(), "taskplans-restart-"));
    const env =
      dialect === "sqlite" ? { PLAN_DATABASE_URL: `sqlite:${join(dir, "plans.sqlite")}` } : undefined;
    const first = await startTestApp(dialect, { env });
    const taskId = await first.newTask();
    await first.plans.savePlan({ taskId, content: "durable", author: { name: "A" } });
    await first.plans.savePlan({ taskId, content: "durable 2", author: { name: "B" } });
    await first.stop();
    const second = await startTestApp(dialect, { env: { PLAN_DATABASE_URL: first.databaseUrl } });
    expect(second.databaseUrl).toBe(first.databaseUrl);
    try {
      expect((await second.plans.getPlan({ taskId })).plan).toMatchObject({
        content: "durable 2",
        version: 2,
      });
      const next = await second.plans.savePlan({ taskId, content: "durable 3", author: { name: "C" } });
      expect([next.plan?.version, next.revision?.number]).toEqual([3, 3]);
    } finally {
      await second.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
