import { request } from "node:http";
import { brotliDecompressSync, gunzipSync, gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import fc from "fast-check";
import { es, WriteMode } from "@taskplans/contract";
import { capturingLogger } from "../../harness/fixtures/capturing-logger";
import { planState } from "../../harness/model/plan-state";
import { startTestApp, type TestApp } from "../../harness/servers/test-app";

// The HTTP door serves Connect's plain exchanges on its direct paths (src/http/connect-unary.ts,
// connect-stream.ts) and everything else through Connect's router. A unary request whose body is
// compressed, or a stream that accepts compressed messages, is the router's; otherwise it is the same
// request. Each case here is sent both ways to one server, both accepting a gzip answer, and the two
// answers must be the same: status, every header but the framing ones (content-encoding included),
// and the body bytes, decompressed. Reads and refusals change nothing, so the server's state is the
// same for both; x-request-id is set so both echo the same one. The refusals of a body that does not
// parse differ on purpose (the direct path's carry an ErrorInfo, the router's do not): their tests
// also show that each request went the path it should.

interface Exchange {
  readonly method?: "POST" | "GET";
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: Buffer | string;
}

interface Answer {
  /** How the answer came compressed (undefined: not compressed). */
  readonly encoding: string | undefined;
  /** The connection header: "close" when the server closes the connection after it. */
  readonly connection: string | undefined;
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

// Framing the two paths may differ in: the router may compress (and then counts other bytes); the
// date and the connection's own headers are the server's.
const FRAMING = new Set([
  "content-length",
  "connect-content-encoding",
  "transfer-encoding",
  "date",
  "connection",
  "keep-alive",
  "vary",
]);

/** A Connect streaming body: each message in an envelope (flags, big-endian length). */
function enveloped(...messages: Buffer[]): Buffer {
  return Buffer.concat(
    messages.flatMap((message) => {
      const prefix = Buffer.alloc(5);
      prefix.writeUInt32BE(message.length, 1);
      return [prefix, message];
    }),
  );
}

/** A Connect stream's envelopes, a compressed one (flag 1) decompressed: flags, then JSON or base64. */
function envelopesOf(body: Buffer): string[] {
  const out: string[] = [];
  for (let at = 0; at + 5 <= body.length;) {
    const flags = body.readUInt8(at);
    const length = body.readUInt32BE(at + 1);
    const raw = body.subarray(at + 5, at + 5 + length);
    const data = flags & 1 ? gunzipSync(raw) : raw;
    const text = data.toString();
    // A snapshot's committedAt is when it was read: each stream reads its own.
    const shown = text.startsWith("{")
      ? text.replace(
          /("kind":"PLAN_CHANGE_KIND_SNAPSHOT".*)"committedAt":"[^"]*"/,
          '$1"committedAt":"(read)"',
        )
      : data.toString("base64");
    out.push(`${flags & ~1}:${shown}`);
    at += 5 + length;
  }
  return out;
}

/** The exchange as the router gets it: a unary request's message compressed, a stream accepting compression. */
function forTheRouter(exchange: Exchange): Exchange {
  const headers = exchange.headers ?? {};
  if (/^application\/connect\+/.test(headers["content-type"] ?? ""))
    return { ...exchange, headers: { ...headers, "connect-accept-encoding": "gzip" } };
  if (exchange.method === "GET") {
    const url = new URL(exchange.path, "http://door");
    const message = url.searchParams.get("message") ?? "";
    const bytes =
      url.searchParams.get("base64") === "1" ? Buffer.from(message, "base64url") : Buffer.from(message);
    url.searchParams.set("message", gzipSync(bytes).toString("base64url"));
    url.searchParams.set("base64", "1");
    url.searchParams.set("compression", "gzip");
    return { ...exchange, path: `${url.pathname}${url.search}` };
  }
  return {
    ...exchange,
    headers: { ...headers, "content-encoding": "gzip" },
    body: gzipSync(exchange.body ?? ""),
  };
}

function send(port: number, exchange: Exchange, acceptGzip = true): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers = {
      "x-request-id": "req-direct-differential",
      ...(acceptGzip ? { "accept-encoding": "gzip" } : {}),
      ...exchange.headers,
    };
    const req = request(
      { host: "127.0.0.1", port, method: exchange.method ?? "POST", path: exchange.path, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          const raw = Buffer.concat(chunks);
          const encoding = res.headers["content-encoding"];
          const streaming = /^application\/connect\+/.test(res.headers["content-type"] ?? "");
          const body = streaming
            ? Buffer.from(envelopesOf(raw).join("\n"))
            : encoding === "gzip"
              ? gunzipSync(raw)
              : encoding === "br"
                ? brotliDecompressSync(raw)
                : raw;
          const kept: Record<string, string> = {};
          for (const [key, value] of Object.entries(res.headers))
            if (!FRAMING.has(key) && value !== undefined) kept[key] = String(value);
          const connection = res.headers.connection;
          resolve({ encoding, connection, status: res.statusCode ?? 0, headers: kept, body });
        });
      },
    );
    req.on("error", reject);
    req.end(exchange.body);
  });
}

/** The answer of the direct path and of the router to the same exchange. */
async function bothWays(port: number, exchange: Exchange): Promise<{ direct: Answer; router: Answer }> {
  const direct = await send(port, exchange);
  const router = await send(port, forTheRouter(exchange));
  return { direct, router };
}

interface ErrorBody {
  code: string;
  message: string;
  details?: { type: string; debug?: Record<string, unknown> }[];
}

const json = (path: string, body: unknown, headers: Record<string, string> = {}): Exchange => ({
  path: `/taskplans.v1.${path}`,
  headers: { "content-type": "application/json", ...headers },
  body: typeof body === "string" ? body : JSON.stringify(body),
});

describe("the HTTP door's direct path answers exactly as Connect's router", () => {
  const log = capturingLogger();
  let app: TestApp;
  let taskId: string;
  let revisions: string[];

  beforeAll(async () => {
    app = await startTestApp("sqlite", { overrides: { logger: log.logger } });
    taskId = await app.newTask();
    // Over 1 KiB, so the router compresses its answers to GetPlan: the bodies are compared decoded.
    await app.plans.createPlan({ taskId, content: `# Plan\n\n${"- a step with ünïcödé 🚀\n".repeat(80)}` });
    for (let i = 0; i < 3; i++)
      await app.plans.updatePlan({ taskId, content: `\n- step ${i}`, mode: WriteMode.WRITE_MODE_APPEND });
    revisions = (await app.plans.listPlanRevisions({ taskId })).revisions.map((revision) => revision.id);
  });
  afterAll(() => app.stop());

  /** GetPlan calls over Connect refused INVALID_ARGUMENT, as the metrics count them. */
  const refusalsCounted = async () => {
    const metrics = await (await fetch(`http://127.0.0.1:${app.metricsPort}/metrics`)).text();
    const line =
      /taskplans_rpc_duration_seconds_count\{method="GetPlan",code="INVALID_ARGUMENT",protocol="connect"\} (\d+)/.exec(
        metrics,
      );
    return Number(line?.[1] ?? 0);
  };

  const cases: [string, () => Exchange][] = [
    ["GetPlan, JSON", () => json("PlanService/GetPlan", { taskId })],
    [
      "GetPlan, JSON with charset",
      () => json("PlanService/GetPlan", { taskId }, { "content-type": "application/json; charset=utf-8" }),
    ],
    ["GetPlan, a range", () => json("PlanService/GetPlan", { taskId, offset: 10, limit: 20 })],
    [
      "GetPlan of a missing task (NOT_FOUND, ErrorInfo)",
      () => json("PlanService/GetPlan", { taskId: "no-such-task" }),
    ],
    [
      "GetPlan with an invalid task id (BadRequest)",
      () => json("PlanService/GetPlan", { taskId: "bad id\u0000" }),
    ],
    ["ListPlanRevisions", () => json("PlanService/ListPlanRevisions", { taskId })],
    ["GetPlanChanges", () => json("PlanService/GetPlanChanges", { taskId, sinceVersion: "1" })],
    [
      "DiffPlanRevisions",
      () =>
        json("PlanService/DiffPlanRevisions", {
          taskId,
          fromRevisionId: revisions.at(-1),
          toRevisionId: revisions[0],
        }),
    ],
    ["GetTask", () => json("TaskService/GetTask", { taskId })],
    ["ListTasks", () => json("TaskService/ListTasks", { workspaceId: "ws-1" })],
    ["a malformed timeout", () => json("PlanService/GetPlan", { taskId }, { "connect-timeout-ms": "soon" })],
    [
      "a timeout",
      () =>
        json(
          "PlanService/GetPlan",
          { taskId },
          { "connect-timeout-ms": "5000", "connect-protocol-version": "1" },
        ),
    ],
    [
      "a stale write (VERSION_MISMATCH, nothing written)",
      () =>
        json("PlanService/UpdatePlan", {
          taskId,
          content: "x",
          mode: "WRITE_MODE_APPEND",
          expectedVersion: "1",
        }),
    ],
    [
      "a write without content (INVALID_ARGUMENT)",
      () => json("PlanService/UpdatePlan", { taskId, mode: "WRITE_MODE_REPLACE", expectedVersion: "1" }),
    ],
    [
      "GetPlan, binary",
      () => ({
        path: "/taskplans.v1.PlanService/GetPlan",
        headers: { "content-type": "application/proto" },
        body: Buffer.from(toBinary(es.GetPlanRequestSchema, create(es.GetPlanRequestSchema, { taskId }))),
      }),
    ],
    [
      "GET, JSON",
      () => ({
        method: "GET",
        path: `/taskplans.v1.PlanService/GetPlan?encoding=json&message=${encodeURIComponent(JSON.stringify({ taskId }))}`,
      }),
    ],
    [
      "GET, binary in base64",
      () => ({
        method: "GET",
        path: `/taskplans.v1.PlanService/GetPlan?encoding=proto&base64=1&message=${Buffer.from(toBinary(es.GetPlanRequestSchema, create(es.GetPlanRequestSchema, { taskId }))).toString("base64url")}`,
      }),
    ],
    [
      "GET of a write (405)",
      () => ({ method: "GET", path: "/taskplans.v1.PlanService/UpdatePlan?encoding=json&message=%7B%7D" }),
    ],
    [
      "a media type that is not Connect's (415)",
      () => json("PlanService/GetPlan", { taskId }, { "content-type": "text/plain" }),
    ],
  ];

  it("a large answer is compressed for a client that accepts gzip, on both paths; plain for one that does not", async () => {
    const { direct, router } = await bothWays(app.httpPort, json("PlanService/GetPlan", { taskId }));
    expect(direct.body.length).toBeGreaterThan(1024);
    expect(direct.encoding).toBe("gzip");
    expect(router.encoding).toBe("gzip");
    expect(direct.body.toString()).toBe(router.body.toString());
    const plain = await send(app.httpPort, json("PlanService/GetPlan", { taskId }), false);
    expect(plain.encoding).toBeUndefined();
    expect(plain.body.toString()).toBe(direct.body.toString());
  });

  it("every read answers a Connect GET; a write refuses one (405)", async () => {
    const requests: Record<string, unknown> = {
      GetPlan: { taskId },
      GetTask: { taskId },
      ListTasks: { workspaceId: "ws-1" },
      ExportTask: { taskId },
      ListPlanRevisions: { taskId },
      GetPlanRevision: { taskId, revisionId: revisions[0] },
      GetPlanChanges: { taskId, sinceVersion: "1" },
      DiffPlanRevisions: { taskId, fromRevisionId: revisions.at(-1), toRevisionId: revisions[0] },
    };
    const reads = [...es.TaskService.methods, ...es.PlanService.methods].filter(
      (method) => method.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS,
    );
    expect(reads.map((method) => method.name).sort()).toEqual(Object.keys(requests).sort());
    for (const method of reads) {
      const message = encodeURIComponent(JSON.stringify(requests[method.name]));
      const path = `/${method.parent.typeName}/${method.name}?encoding=json&message=${message}`;
      const answer = await send(app.httpPort, { method: "GET", path }, false);
      expect({ method: method.name, status: answer.status }).toEqual({ method: method.name, status: 200 });
    }
    const write = await send(
      app.httpPort,
      { method: "GET", path: "/taskplans.v1.TaskService/DeleteTask?encoding=json&message=%7B%7D" },
      false,
    );
    expect(write.status).toBe(405);
  });

  // A body that is not a valid request is refused inside the call's scope on the direct path, as a
  // malformed gRPC request is: INVALID_ARGUMENT with an ErrorInfo, a log line and a metric. The
  // router refuses it with the library's bare error (and a binary one as INTERNAL).
  const refusals: [string, () => Exchange, string, RegExp, number][] = [
    [
      "an unknown field",
      () => json("PlanService/GetPlan", { taskId, nonsense: 1 }),
      "MALFORMED_REQUEST",
      /key "nonsense" is unknown/,
      400,
    ],
    ["invalid JSON", () => json("PlanService/GetPlan", '{"taskId": '), "MALFORMED_REQUEST", /JSON/, 400],
    ["a wrong type", () => json("PlanService/GetPlan", { taskId: 5 }), "MALFORMED_REQUEST", /task_id/, 400],
    ["an empty body", () => json("PlanService/GetPlan", ""), "MALFORMED_REQUEST", /JSON/, 400],
    [
      "a body that is not UTF-8",
      () => ({ ...json("PlanService/GetPlan", ""), body: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]) }),
      "INVALID_UTF8",
      /not valid UTF-8/,
      400,
    ],
    [
      "GET with invalid JSON",
      () => ({ method: "GET", path: "/taskplans.v1.PlanService/GetPlan?encoding=json&message=%7B" }),
      "MALFORMED_REQUEST",
      /JSON/,
      400,
    ],
    [
      "binary that is not a message",
      () => ({
        path: "/taskplans.v1.PlanService/GetPlan",
        headers: { "content-type": "application/proto" },
        body: Buffer.from([0xff, 0xff, 0xff]),
      }),
      "MALFORMED_REQUEST",
      /truncated|not a valid/,
      500,
    ],
  ];

  it.each(refusals)(
    "%s: refused in the call's scope (ErrorInfo, log, metric)",
    async (_name, exchange, reason, detail, routerStatus) => {
      const before = await planState(app.plans, taskId);
      const counted = await refusalsCounted();
      const logged = log.lines.length;
      const { direct, router } = await bothWays(app.httpPort, exchange());
      expect(direct.status).toBe(400);
      const body = JSON.parse(direct.body.toString()) as ErrorBody;
      expect(body.code).toBe("invalid_argument");
      expect(body.message).toMatch(/^Request was not processed because /);
      expect(body.message).toMatch(detail);
      const info = body.details?.find((d) => d.type === "google.rpc.ErrorInfo")?.debug;
      expect(info).toMatchObject({ reason, metadata: { request_id: "req-direct-differential" } });
      expect(direct.headers["x-request-id"]).toBe("req-direct-differential");
      expect(await refusalsCounted()).toBe(counted + 1);
      const lines = log.lines.slice(logged).map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines).toContainEqual(
        expect.objectContaining({
          msg: "rpc rejected",
          method: "GetPlan",
          protocol: "connect",
          code: "INVALID_ARGUMENT",
          reason,
          requestId: "req-direct-differential",
        }),
      );
      // The router refuses the same body with the library's error: no ErrorInfo (garbage binary: internal).
      expect(router.status).toBe(routerStatus);
      expect((JSON.parse(router.body.toString()) as ErrorBody).details).toBeUndefined();
      expect(await planState(app.plans, taskId)).toEqual(before);
    },
  );

  it.each(cases)("%s", async (_name, exchange) => {
    const before = await planState(app.plans, taskId);
    const { direct, router } = await bothWays(app.httpPort, exchange());
    expect(direct.status).toBe(router.status);
    expect(direct.headers).toEqual(router.headers);
    expect(direct.body.toString("base64")).toBe(router.body.toString("base64"));
    expect(await planState(app.plans, taskId)).toEqual(before);
  });

  const watch = (messages: Buffer[], headers: Record<string, string> = {}): Exchange => ({
    path: "/taskplans.v1.PlanService/WatchPlan",
    headers: { "content-type": "application/connect+json", ...headers },
    body: enveloped(...messages),
  });
  const watchJson = (request: unknown) => Buffer.from(JSON.stringify(request));
  const streams: [string, () => Exchange][] = [
    [
      "WatchPlan until its timeout: the snapshot, then deadline_exceeded",
      () => watch([watchJson({ taskId, includeContent: true })], { "connect-timeout-ms": "400" }),
    ],
    [
      "WatchPlan, binary, of a missing task",
      () => ({
        ...watch([
          Buffer.from(
            toBinary(
              es.WatchPlanRequestSchema,
              create(es.WatchPlanRequestSchema, { taskId: "no-such-task" }),
            ),
          ),
        ]),
        headers: { "content-type": "application/connect+proto" },
      }),
    ],
    ["WatchPlan of a missing task", () => watch([watchJson({ taskId: "no-such-task" })])],
    ["WatchPlan without a request message", () => watch([])],
    ["WatchPlan with two request messages", () => watch([watchJson({ taskId }), watchJson({ taskId })])],
    [
      "WatchPlan with a malformed timeout",
      () => watch([watchJson({ taskId })], { "connect-timeout-ms": "x" }),
    ],
  ];

  it("WatchPlan with an unknown field or invalid JSON: the direct path's stream ends invalid_argument with an ErrorInfo, the router's without", async () => {
    for (const request of [watchJson({ taskId, nonsense: true }), Buffer.from("{")]) {
      const { direct, router } = await bothWays(app.httpPort, watch([request]));
      for (const answer of [direct, router]) expect(answer.status).toBe(200);
      const [end] = direct.body.toString().split("\n");
      const { error } = JSON.parse((end ?? "").slice(2)) as { error: ErrorBody };
      expect(error.code).toBe("invalid_argument");
      expect(error.details?.find((d) => d.type === "google.rpc.ErrorInfo")?.debug).toMatchObject({
        reason: "MALFORMED_REQUEST",
      });
      // The router's refusal of the same request has no ErrorInfo: each went its own path.
      const [routerEnd] = router.body.toString().split("\n");
      const routerError = (JSON.parse((routerEnd ?? "").slice(2)) as { error: ErrorBody }).error;
      expect(routerError.code).toBe("invalid_argument");
      expect(routerError.details).toBeUndefined();
    }
  });

  it.each(streams)("%s", async (_name, exchange) => {
    const before = await planState(app.plans, taskId);
    const { direct, router } = await bothWays(app.httpPort, exchange());
    expect(direct.status).toBe(router.status);
    expect(direct.headers).toEqual(router.headers);
    expect(direct.body.toString()).toBe(router.body.toString());
    expect(await planState(app.plans, taskId)).toEqual(before);
  });

  it("a body over the limit is refused by its length before it is read, and the connection closed after", async () => {
    const before = await planState(app.plans, taskId);
    const big = json("PlanService/GetPlan", JSON.stringify({ taskId, x: "y".repeat(1024 * 1024 + 10) }));
    const answer = await send(app.httpPort, big);
    expect(answer.status).toBe(429);
    expect(JSON.parse(answer.body.toString())).toEqual({
      code: "resource_exhausted",
      message: `message size ${String(big.body?.length)} is larger than configured readMaxBytes 1048576`,
    });
    expect(answer.connection).toBe("close");
    expect(await planState(app.plans, taskId)).toEqual(before);
  });

  it("a stream whose timeout passes ends deadline_exceeded after its snapshot on both paths, as over gRPC", async () => {
    const answers = await bothWays(
      app.httpPort,
      watch([watchJson({ taskId })], { "connect-timeout-ms": "300" }),
    );
    for (const answer of [answers.direct, answers.router]) {
      const envelopes = answer.body.toString().split("\n");
      expect(envelopes).toHaveLength(2);
      expect(envelopes[0]).toMatch(/^0:\{"kind":"PLAN_CHANGE_KIND_SNAPSHOT"/);
      expect(envelopes[1]).toBe(
        '2:{"error":{"code":"deadline_exceeded","message":"the operation timed out"}}',
      );
    }
  });

  it("WatchPlan with a message over the limit: the direct path ends the stream resource_exhausted and closes the connection (the router resets it)", async () => {
    const before = await planState(app.plans, taskId);
    const big = watch([Buffer.from(JSON.stringify({ taskId, x: "y".repeat(1024 * 1024) }))]);
    const direct = await send(app.httpPort, big);
    expect(direct.status).toBe(200);
    const [end] = direct.body.toString().split("\n");
    expect(end).toMatch(
      /^2:\{"error":\{"code":"resource_exhausted","message":"message size \d+ is larger than configured readMaxBytes 1048576"/,
    );
    expect(await planState(app.plans, taskId)).toEqual(before);
    // The rest of the body is not read: the connection is closed after the refusal.
    expect(direct.connection).toBe("close");
  });

  it("answers any GetPlan, ListPlanRevisions or GetPlanChanges request body as the router does, a refusal with the same code (property)", async () => {
    const value = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(taskId),
      fc.bigInt().map(String),
      fc.array(fc.integer(), { maxLength: 3 }),
    );
    const field = fc.constantFrom(
      "taskId",
      "offset",
      "limit",
      "sinceVersion",
      "pageSize",
      "pageToken",
      "task_id",
      "extra",
    );
    const body = fc.oneof(
      fc.dictionary(field, value, { maxKeys: 4 }).map((object) => JSON.stringify(object)),
      fc.string({ maxLength: 40 }),
    );
    const path = fc.constantFrom(
      "PlanService/GetPlan",
      "PlanService/ListPlanRevisions",
      "PlanService/GetPlanChanges",
    );
    const before = await planState(app.plans, taskId);
    await fc.assert(
      fc.asyncProperty(path, body, async (method, text) => {
        const { direct, router } = await bothWays(app.httpPort, json(method, text));
        expect(direct.status).toBe(router.status);
        if (router.status === 200) {
          expect(direct.headers).toEqual(router.headers);
          expect(direct.body.toString()).toBe(router.body.toString());
        } else {
          // A body that does not parse is refused in the call's scope (above): the same code.
          const code = (answer: Answer) => (JSON.parse(answer.body.toString()) as ErrorBody).code;
          expect(code(direct)).toBe(code(router));
        }
      }),
      { numRuns: 150 },
    );
    expect(await planState(app.plans, taskId)).toEqual(before);
  });
});
