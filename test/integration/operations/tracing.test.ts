import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../../harness/otlp/otlp-receiver";
import { preparePythonEnv, run } from "../../harness/packages/client-packages";
import { runToExit } from "../../harness/servers/processes";
import { type RedisNode, startRedisNodes } from "../../harness/databases/redis";
import { type Replica, startReplica } from "../../harness/servers/replica";
import { connect } from "../../harness/calls/rpc";
import { curl } from "../../harness/calls/curl";
import Redis from "ioredis";
import { interestMessage } from "../../../src/watch/change-message";

// OpenTelemetry end to end: the built server (dist/src/bin/main.js) exports over OTLP/gRPC, as the
// standard OTEL_* variables configure it, to a test receiver that decodes with OpenTelemetry's own
// protobuf definitions; a TypeScript back end traced by its standard gRPC instrumentation starts
// the trace; so do a Go and a Python back end with theirs. Change notifications go over Redis: a
// write to a task another replica watches publishes, and that publish has its span too.
const ROOT = join(__dirname, "..", "..", "..");
const SERVER = 2; // SpanKind SERVER in OTLP
const CLIENT = 3;

let dir: string;
let receiver: OtlpReceiver;
let redis: RedisNode[];
let replica: Replica;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "taskplans-tracing-"));
  [receiver, redis] = await Promise.all([startOtlpReceiver(dir), startRedisNodes(1)]);
  replica = await startReplica(
    {
      PLAN_DATABASE_URL: `sqlite:${join(dir, "plans.sqlite")}`,
      PLAN_CHANGES_REDIS_URL: redis[0]?.url ?? "",
      PLAN_COALESCE_WINDOW_MS: "0",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      OTEL_BSP_SCHEDULE_DELAY: "100",
    },
    dir,
    null,
    { logLevel: "info" },
  );
}, 180_000);

afterAll(async () => {
  await replica?.stop();
  await Promise.all([receiver?.stop(), ...(redis ?? []).map((node) => node.stop())]);
  rmSync(dir, { recursive: true, force: true });
});

const byId = (spans: ReceivedSpan[]) => new Map(spans.map((span) => [span.spanId, span]));

/** Runs one traced back end; resolves the trace id it printed. */
async function traceFrom(argv: string[]): Promise<string> {
  const run = await runToExit(argv, { cwd: ROOT, timeoutMs: 300_000 });
  if (run.code !== 0) throw new Error(`${argv.join(" ")} exited ${run.code}: ${run.stdout}${run.stderr}`);
  return run.stdout.trim().split("\n").pop() ?? "";
}

/** The spans of `traceId` once the service's UpdatePlan spans (`updates` of them) and the caller's root arrived. */
async function spansOf(traceId: string, updates: number): Promise<ReceivedSpan[]> {
  const ofTrace = (all: ReceivedSpan[]) => all.filter((span) => span.traceId === traceId);
  return ofTrace(
    await receiver.until(`the spans of trace ${traceId}`, (all) => {
      const names = ofTrace(all).map((span) => span.name);
      const serverUpdates = ofTrace(all).filter(
        (span) => span.service === "taskplans" && span.name === "taskplans.v1.PlanService/UpdatePlan",
      );
      return (
        serverUpdates.length === updates && names.includes("db transaction") && names.includes("backend job")
      );
    }),
  );
}

// Each back end's standard instrumentation names its client spans its own way: "grpc.<service>/<method>"
// (JavaScript), "<service>/<method>" (Go), "/<service>/<method>" (Python).
const methodOf = (name: string) => name.replace(/^(grpc\.|\/)/, "");

const BACK_ENDS: [string, string, () => Promise<string[]>][] = [
  [
    "TypeScript (@opentelemetry/instrumentation-grpc)",
    "ts-backend",
    async () => [
      process.execPath,
      join(ROOT, "test", "harness", "otlp", "traced-client.mjs"),
      `127.0.0.1:${replica.port}`,
      receiver.endpoint,
    ],
  ],
  [
    "Go (otelgrpc)",
    "go-backend",
    async () => {
      const binary = join(dir, "traced-go");
      await run(["go", "build", "-o", binary, "."], { cwd: join(ROOT, "test", "harness", "otlp", "go") });
      return [binary, `127.0.0.1:${replica.port}`, receiver.endpoint.replace("http://", "")];
    },
  ],
  [
    "Python (opentelemetry-instrumentation-grpc)",
    "python-backend",
    async () => {
      const env = await preparePythonEnv("otlp-client", "test/harness/otlp/requirements-client.txt", dir);
      return [
        env.python,
        join(ROOT, "test", "harness", "otlp", "traced_client.py"),
        `127.0.0.1:${replica.port}`,
        receiver.endpoint,
      ];
    },
  ],
];

describe.each(BACK_ENDS)("a trace started in a %s back end", (_language, service, command) => {
  let traceId: string;
  let spans: ReceivedSpan[];

  beforeAll(async () => {
    traceId = await traceFrom(await command());
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    spans = await spansOf(traceId, service === "ts-backend" ? 2 : 1);
  }, 600_000);

  it("continues through the service: each server span is the child of the back end's client span, under its own span", () => {
    const spanById = byId(spans);
    const [job] = spans.filter((span) => span.name === "backend job");
    expect(job?.service).toBe(service);
    const servers = spans.filter((span) => span.service === "taskplans" && span.kind === SERVER);
    expect(new Set(servers.map((span) => span.name))).toEqual(
      new Set([
        "taskplans.v1.PlanService/CreatePlan",
        "taskplans.v1.PlanService/UpdatePlan",
        "taskplans.v1.TaskService/CreateTask",
      ]),
    );
    for (const server of servers) {
      const caller = spanById.get(server.parentSpanId);
      expect([caller?.service, caller?.kind, methodOf(caller?.name ?? "")]).toEqual([
        service,
        CLIENT,
        server.name,
      ]);
      expect(caller?.parentSpanId).toBe(job?.spanId);
      expect(server.attributes).toMatchObject({
        "rpc.system": "grpc",
        "rpc.service": server.name.split("/")[0],
        "rpc.method": server.name.split("/")[1],
      });
    }
  });

  it("puts the lock wait and the database transaction under the write's span (nobody watches: no publish)", () => {
    const [append] = spans.filter(
      (span) =>
        span.name === "taskplans.v1.PlanService/UpdatePlan" && span.attributes["rpc.grpc.status_code"] === 0,
    );
    const children = spans.filter((span) => span.parentSpanId === append?.spanId).map((span) => span.name);
    expect(children.sort()).toEqual(["db transaction", "lock wait"]);
    const transaction = spans.find(
      (span) => span.name === "db transaction" && span.parentSpanId === append?.spanId,
    );
    expect(transaction?.attributes).toMatchObject({
      "db.system.name": "sqlite",
      "taskplans.transaction.outcome": "committed",
    });
    expect(append?.attributes["taskplans.task_id"]).toMatch(/^traced-(ts|go|py)-/);
  });

  it("never puts plan content or titles in a span", () => {
    const text = JSON.stringify(spans.filter((span) => span.service === "taskplans"));
    for (const secret of ["# Traced", "a step", "# Replaced", '"traced"']) expect(text).not.toContain(secret);
  });
});

describe("the TypeScript back end's trace, read further", () => {
  let traceId: string;
  let spans: ReceivedSpan[];

  beforeAll(async () => {
    traceId = await traceFrom(await (BACK_ENDS[0]?.[2] ?? (async () => []))());
    spans = await spansOf(traceId, 2);
  }, 120_000);

  it("records a refusal's code and ErrorInfo reason, leaving the status unset for a caller's mistake", () => {
    const [refused] = spans.filter(
      (span) =>
        span.name === "taskplans.v1.PlanService/UpdatePlan" && span.attributes["rpc.grpc.status_code"] === 3,
    );
    expect(refused?.attributes["taskplans.error.reason"]).toBe("VERSION_REQUIRED");
    expect(refused?.status).toBe(0);
  });

  it("writes the trace id and span id on the call's log lines", () => {
    const lines = readFileSync(replica.logFile, "utf8")
      .split("\n")
      .filter((line) => line.includes(traceId))
      .map((line) => JSON.parse(line) as { trace_id?: string; span_id?: string; method?: string });
    const servers = new Set(spans.filter((span) => span.kind === SERVER).map((span) => span.spanId));
    expect(lines.map((line) => line.method).sort()).toEqual([
      "CreatePlan",
      "CreateTask",
      "UpdatePlan",
      "UpdatePlan",
    ]);
    for (const line of lines) expect(servers.has(line.span_id ?? "")).toBe(true);
  });
});

it("starts no tracing without an OTLP endpoint, and says so", async () => {
  const plain = await startReplica({ PLAN_DATABASE_URL: `sqlite:${join(dir, "plain.sqlite")}` }, dir, null, {
    logLevel: "info",
  });
  try {
    expect(readFileSync(plain.logFile, "utf8")).toContain('"tracing":"off"');
  } finally {
    await plain.stop();
  }
});

describe("a write to a task another replica watches", () => {
  it("continues the trace of an HTTP call (Connect JSON with traceparent) as of a gRPC call, its server span a child of the caller's", async () => {
    const taskId = `traced-http-${Date.now()}`;
    const client = connect(replica.port);
    try {
      await client.tasks.createTask({ taskId, workspaceId: "ws-1", title: "over http" });
      await client.plans.createPlan({ taskId, content: "# Over HTTP\n" });
    } finally {
      client.close();
    }
    const traceId = randomBytes(16).toString("hex");
    const parentId = randomBytes(8).toString("hex");
    const answered = await curl([
      "-X",
      "POST",
      `http://127.0.0.1:${replica.httpPort}/taskplans.v1.PlanService/UpdatePlan`,
      "-H",
      "content-type: application/json",
      "-H",
      `traceparent: 00-${traceId}-${parentId}-01`,
      "-d",
      JSON.stringify({ taskId, content: "- over http", mode: "WRITE_MODE_APPEND" }),
    ]);
    expect(answered.status).toBe(200);
    const spans = await receiver.until("the HTTP call's server span", (all) =>
      all.some((span) => span.traceId === traceId && span.name === "taskplans.v1.PlanService/UpdatePlan"),
    );
    const server = spans.find(
      (span) => span.traceId === traceId && span.name === "taskplans.v1.PlanService/UpdatePlan",
    );
    expect(server).toMatchObject({ service: "taskplans", parentSpanId: parentId });
    const children = spans.filter((span) => span.parentSpanId === server?.spanId).map((span) => span.name);
    expect(children).toEqual(expect.arrayContaining(["db transaction", "lock wait"]));
  });

  it("puts the Redis publish under the write's span, beside the lock wait and the transaction", async () => {
    const taskId = `traced-watched-${Date.now()}`;
    const client = connect(replica.port);
    const other = new Redis(redis[0]?.url ?? "");
    try {
      await client.tasks.createTask({ taskId, workspaceId: "ws-1", title: "watched" });
      await client.plans.createPlan({ taskId, content: "# Watched\n" });
      // What another replica says when a watcher of the task opens there (src/watch/change-bus.ts).
      await other.publish("taskplans:changes", interestMessage("another-replica", [taskId]));
      const isWrite = (span: ReceivedSpan) =>
        span.name === "taskplans.v1.PlanService/UpdatePlan" &&
        span.attributes["taskplans.task_id"] === taskId;
      const published = (all: ReceivedSpan[]) => {
        const writes = new Set(all.filter(isWrite).map((span) => span.spanId));
        return all.some((span) => span.name === "redis publish" && writes.has(span.parentSpanId));
      };
      // The replica hears the interest on its own Redis connection, so a write can overtake it (and
      // then publishes nothing): write again until one publishes, at most five times.
      let spans: ReceivedSpan[] = [];
      for (let attempt = 0; attempt < 5 && !published(spans); attempt++) {
        await client.plans.updatePlan({ taskId, content: `- watched ${attempt}`, mode: 2 });
        spans = await receiver
          .until("the watched write's publish", published, 2_000)
          .catch(() => receiver.spans());
      }
      expect(published(spans)).toBe(true);
      const write = spans.find(
        (span) =>
          isWrite(span) && spans.some((c) => c.name === "redis publish" && c.parentSpanId === span.spanId),
      );
      const children = spans.filter((span) => span.parentSpanId === write?.spanId).map((span) => span.name);
      expect(children.sort()).toEqual(["db transaction", "lock wait", "redis publish"]);
    } finally {
      other.disconnect();
      client.close();
    }
  });
});
