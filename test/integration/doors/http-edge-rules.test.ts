import { curl, type CurlResult } from "../../harness/calls/curl";
import { capturingLogger } from "../../harness/fixtures/capturing-logger";
import { planState } from "../../harness/model/plan-state";
import { randomId, startTestApp, type TestApp } from "../../harness/servers/test-app";

// The edge rules of the HTTP door, the console and /metrics (docs/http.md, "Host and Origin";
// issue 54, defect 4) as the real curl sees them: a request whose Host is a name the listener does
// not answer (a DNS-rebinding page keeps its own name in Host) is refused 403 before anything reads
// it, reads, writes and the console alike, and a write from another origin is refused the same way.

const ATTACKER = "attacker.example";
const LISTED_ORIGIN = "https://editor.example.com";

interface EdgeBody {
  code: string;
  message: string;
}

/** Expects an edge refusal: 403, a Connect JSON error naming the setting, no ErrorInfo. */
function expectRefused(result: CurlResult, setting: string) {
  expect([result.status, (result.json as EdgeBody | undefined)?.code]).toEqual([403, "permission_denied"]);
  expect((result.json as EdgeBody).message).toContain(setting);
  expect((result.json as EdgeBody).message).toContain("nothing was read or changed");
}

describe("the HTTP door's edge rules, bound to loopback (the embedded default)", () => {
  const log = capturingLogger();
  let app: TestApp;
  let base: string;
  let port: number;
  const call = (path: string, body: unknown, headers: string[] = []) =>
    curl(
      [
        "-X",
        "POST",
        `${base}/taskplans.v1.${path}`,
        "-H",
        "content-type: application/json",
        ...headers.flatMap((h) => ["-H", h]),
        "--data-binary",
        "@-",
      ],
      JSON.stringify(body),
    );

  beforeAll(async () => {
    app = await startTestApp("sqlite", {
      env: { PLAN_HTTP_CORS_ORIGINS: LISTED_ORIGIN },
      overrides: { logger: log.logger },
    });
    port = app.httpPort;
    base = `http://127.0.0.1:${port}`;
  });
  afterAll(() => app.stop());

  it("refuses Host: attacker.example for reads, writes and the console, and nothing changes", async () => {
    const taskId = await app.newTask();
    await app.plans.createPlan({ taskId, content: "# Plan\n\n- kept\n" });
    const before = await planState(app.plans, taskId);
    const host = [`Host: ${ATTACKER}:${port}`];

    expectRefused(await call("PlanService/GetPlan", { taskId }, host), "PLAN_HTTP_ALLOWED_HOSTS");
    const message = encodeURIComponent(JSON.stringify({ taskId }));
    const viaGet = await curl([
      "-H",
      host[0] as string,
      `${base}/taskplans.v1.PlanService/GetPlan?connect=v1&encoding=json&message=${message}`,
    ]);
    expectRefused(viaGet, "PLAN_HTTP_ALLOWED_HOSTS");
    expect(viaGet.body).not.toContain("kept");

    const newTask = randomId("task");
    expectRefused(
      await call("TaskService/CreateTask", { taskId: newTask, workspaceId: "ws-1", title: "t" }, host),
      "PLAN_HTTP_ALLOWED_HOSTS",
    );
    expectRefused(
      await call("PlanService/UpdatePlan", { taskId, content: "- added", mode: "WRITE_MODE_APPEND" }, host),
      "PLAN_HTTP_ALLOWED_HOSTS",
    );
    expectRefused(await call("PlanService/DeletePlan", { taskId }, host), "PLAN_HTTP_ALLOWED_HOSTS");
    expectRefused(await call("TaskService/DeleteTask", { taskId }, host), "PLAN_HTTP_ALLOWED_HOSTS");
    // Without a port, and with a trailing dot, the name is the same name.
    expectRefused(
      await call("PlanService/GetPlan", { taskId }, [`Host: ${ATTACKER}.`]),
      "PLAN_HTTP_ALLOWED_HOSTS",
    );
    for (const path of ["/console/", "/console/console.js", "/console/csp-report"]) {
      const console = await curl(["-H", host[0] as string, `${base}${path}`]);
      expectRefused(console, "PLAN_HTTP_ALLOWED_HOSTS");
    }

    // Nothing was created, changed or deleted.
    expect(await planState(app.plans, taskId)).toEqual(before);
    await expect(app.tasks.getTask({ taskId })).resolves.toMatchObject({ task: { taskId } });
    await expect(app.tasks.getTask({ taskId: newTask })).rejects.toMatchObject({ code: 5 });
  });

  it("answers the loopback names, whatever the port (a port-forward), and a request without Host", async () => {
    const taskId = await app.newTask();
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `[::1]:${port}`,
      "localhost:9999",
      "LOCALHOST",
    ]) {
      const read = await call("TaskService/GetTask", { taskId }, [`Host: ${host}`]);
      expect([host, read.status]).toEqual([host, 200]);
    }
    const console = await curl(["-H", `Host: localhost:${port}`, `${base}/console/`]);
    expect(console.status).not.toBe(403);
    // HTTP/1.0 without Host: not a browser, nothing to rebind.
    const bare = await curl([
      "--http1.0",
      "-H",
      "Host:",
      "-X",
      "POST",
      "-H",
      "content-type: application/json",
      "--data-binary",
      JSON.stringify({ taskId }),
      `${base}/taskplans.v1.TaskService/GetTask`,
    ]);
    expect(bare.status).toBe(200);
  });

  it("refuses a write from another origin with nothing changed; its own origin, a listed one and no Origin may write", async () => {
    const taskId = await app.newTask();
    await app.plans.createPlan({ taskId, content: "# Plan\n" });
    const before = await planState(app.plans, taskId);
    const append = { taskId, content: "- from elsewhere", mode: "WRITE_MODE_APPEND" };
    for (const origin of ["https://attacker.example", "null", `http://127.0.0.1:${port + 1}`])
      expectRefused(
        await call("PlanService/UpdatePlan", append, [`Origin: ${origin}`]),
        "PLAN_HTTP_CORS_ORIGINS",
      );
    const created = randomId("task");
    expectRefused(
      await call("TaskService/CreateTask", { taskId: created, workspaceId: "ws-1", title: "t" }, [
        "Origin: https://attacker.example",
      ]),
      "PLAN_HTTP_CORS_ORIGINS",
    );
    expect(await planState(app.plans, taskId)).toEqual(before);
    await expect(app.tasks.getTask({ taskId: created })).rejects.toMatchObject({ code: 5 });

    // A POST is refused from another origin even for a read; a GET read is not (CORS keeps its
    // answer from the page, and it changes nothing).
    expectRefused(
      await call("TaskService/GetTask", { taskId }, ["Origin: https://attacker.example"]),
      "PLAN_HTTP_CORS_ORIGINS",
    );
    const message = encodeURIComponent(JSON.stringify({ taskId }));
    const crossGet = await curl([
      "-H",
      "Origin: https://attacker.example",
      `${base}/taskplans.v1.TaskService/GetTask?connect=v1&encoding=json&message=${message}`,
    ]);
    expect(crossGet.status).toBe(200);
    const sameOrigin = await call("PlanService/UpdatePlan", { ...append, content: "- same origin" }, [
      `Origin: http://127.0.0.1:${port}`,
    ]);
    expect(sameOrigin.status).toBe(200);
    const viaLocalhost = await call("PlanService/UpdatePlan", { ...append, content: "- localhost" }, [
      `Host: localhost:${port}`,
      `Origin: http://localhost:${port}`,
    ]);
    expect(viaLocalhost.status).toBe(200);
    const listed = await call("PlanService/UpdatePlan", { ...append, content: "- listed" }, [
      `Origin: ${LISTED_ORIGIN}`,
    ]);
    expect(listed.status).toBe(200);
    const noOrigin = await call("PlanService/UpdatePlan", { ...append, content: "- no origin" });
    expect(noOrigin.status).toBe(200);
    expect((await planState(app.plans, taskId)).plan?.version).toBe(5);
  });

  it("guards /metrics by Host too, and logs a flood of refusals in at most two lines", async () => {
    const metrics = `http://127.0.0.1:${app.metricsPort}/metrics`;
    expectRefused(await curl(["-H", `Host: ${ATTACKER}`, metrics]), "PLAN_HTTP_ALLOWED_HOSTS");
    const scraped = await curl([metrics]);
    expect(scraped.status).toBe(200);
    const refusals = (text: string) =>
      Number(/^taskplans_http_edge_refusals_total\{listener="http",rule="host"\} (\d+)$/m.exec(text)?.[1]);
    const counted = refusals(scraped.body);

    const logged = () => log.lines.filter((line) => line.includes("refused at the edge"));
    const linesBefore = logged().length;
    const hugeHost = `${"a".repeat(4000)}.example`;
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        curl(["-H", `Host: ${i % 2 ? hugeHost : ATTACKER}`, `${base}/console/`]),
      ),
    );
    expect(refusals((await curl([metrics])).body)).toBe(counted + 40);
    // The same window as the refusals above: no new line at once; the count comes when it closes.
    expect(logged().length - linesBefore).toBeLessThanOrEqual(2);
    for (const line of logged()) expect(line.length).toBeLessThan(1024);
  });
});

describe("the HTTP door's edge rules, bound beyond loopback (a container, a pod behind a Service)", () => {
  let app: TestApp;
  let base: string;

  beforeAll(async () => {
    app = await startTestApp("sqlite", {
      env: {
        PLAN_HTTP_ADDRESS: "0.0.0.0:0",
        PLAN_HTTP_ALLOWED_HOSTS: "plans.internal.example,.corp.example",
      },
    });
    base = `http://127.0.0.1:${app.httpPort}`;
  });
  afterAll(() => app.stop());

  it("answers IP literals (probes, Prometheus), single-label Service names (helm test), loopback and listed names; refuses others", async () => {
    const taskId = await app.newTask();
    const read = (host: string) =>
      curl([
        "-X",
        "POST",
        "-H",
        "content-type: application/json",
        "-H",
        `Host: ${host}`,
        "--data-binary",
        JSON.stringify({ taskId }),
        `${base}/taskplans.v1.TaskService/GetTask`,
      ]);
    for (const host of [
      "10.244.0.17:8080",
      "[fd00::17]:8080",
      "rel-taskplans:8080",
      "localhost:8080",
      "plans.internal.example",
      "corp.example",
      "plans.eu.corp.example:443",
    ])
      expect([host, (await read(host)).status]).toEqual([host, 200]);
    for (const host of [
      ATTACKER,
      "rel-taskplans.default.svc.cluster.local",
      "plans.internal.example.evil",
      "evilcorp.example",
    ])
      expect([host, (await read(host)).status]).toEqual([host, 403]);
  });
});
