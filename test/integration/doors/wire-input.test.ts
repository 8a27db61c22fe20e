import { Metadata, status } from "@grpc/grpc-js";
import { PlanServiceService } from "@taskplans/contract";
import { TaskServiceService } from "@taskplans/contract";
import { capturingLogger } from "../../harness/fixtures/capturing-logger";
import { planState } from "../../harness/model/plan-state";
import { bytesField, rawCall, varintField } from "../../harness/calls/raw-call";
import { rpcError } from "../../harness/calls/rpc";
import { DATABASES, startTestApp, type TestApp } from "../../harness/servers/test-app";

// Requests whose bytes are not a valid message (AC: protobuf string fields are UTF-8; 64-bit numbers
// are never rounded). The generated client cannot produce them, so they are sent as raw bytes.
const UPDATE = "/taskplans.v1.PlanService/UpdatePlan";
const APPEND = 2;
const utf8 = (text: string) => Buffer.from(text, "utf8");
const INVALID_SEQUENCES: [string, Buffer][] = [
  ["an encoded surrogate (ED A0 80)", Buffer.from([0x61, 0xed, 0xa0, 0x80, 0x62])],
  ["a lone FF byte", Buffer.from([0x61, 0xff, 0x62])],
  ["an overlong NUL (C0 80)", Buffer.from([0x61, 0xc0, 0x80, 0x62])],
];

describe.each(DATABASES)("requests that are not valid messages, on $label", ({ dialect }) => {
  let app: TestApp;
  let taskId: string;
  const { logger, lines } = capturingLogger();

  beforeAll(async () => {
    app = await startTestApp(dialect, { overrides: { logger } });
    taskId = await app.newTask();
    await app.plans.createPlan({ taskId, content: "# Plan" });
  });
  afterAll(() => app.stop());

  const append = (content: Buffer, extra: Buffer = Buffer.alloc(0)) =>
    Buffer.concat([bytesField(1, utf8(taskId)), bytesField(3, content), varintField(4, APPEND), extra]);

  it.each(INVALID_SEQUENCES)(
    "an append whose content holds %s is INVALID_UTF8 naming content, and stores nothing",
    async (_name, content) => {
      const before = await planState(app.plans, taskId);
      const { error, details } = await rawCall(app.port, UPDATE, append(content));
      expect(error?.code).toBe(status.INVALID_ARGUMENT);
      expect(details?.errorInfo?.reason).toBe("INVALID_UTF8");
      expect(details?.errorInfo?.metadata).toMatchObject({
        field: "content",
        request_id: expect.any(String),
      });
      expect(details?.badRequest?.fieldViolations.map((v) => v.field)).toEqual(["content"]);
      expect(error?.details).toBe(
        "Request was not processed because field content is not valid UTF-8. Send string fields as valid UTF-8 and retry.",
      );
      expect(await planState(app.plans, taskId)).toEqual(before);
    },
  );

  it("names a nested field (author.name) when its bytes are not UTF-8", async () => {
    const before = await planState(app.plans, taskId);
    const author = bytesField(7, Buffer.concat([varintField(1, 1), bytesField(2, Buffer.from([0xff]))]));
    const { details } = await rawCall(app.port, UPDATE, append(utf8("- fine"), author));
    expect([details?.errorInfo?.reason, details?.errorInfo?.metadata.field]).toEqual([
      "INVALID_UTF8",
      "author.name",
    ]);
    expect(await planState(app.plans, taskId)).toEqual(before);
  });

  it("rejects invalid UTF-8 in task_id on every RPC of both services", async () => {
    const paths = [...Object.values(PlanServiceService), ...Object.values(TaskServiceService)].map(
      (m) => m.path,
    );
    expect(paths.length).toBeGreaterThan(13);
    const invalid = Buffer.from([0xed, 0xa0, 0x80]);
    // ListTasks has no task_id (its first field is workspace_id); ImportTask's is in start.task.
    const requests: Record<string, [Buffer, string]> = {
      "/taskplans.v1.TaskService/ListTasks": [bytesField(1, invalid), "workspace_id"],
      "/taskplans.v1.TaskService/ImportTask": [
        bytesField(1, bytesField(1, bytesField(1, invalid))),
        "start.task.task_id",
      ],
    };
    for (const path of paths) {
      const [request, field] = requests[path] ?? [bytesField(1, invalid), "task_id"];
      const { error, details } = await rawCall(app.port, path, request);
      expect([path, error?.code, details?.errorInfo?.reason, details?.errorInfo?.metadata.field]).toEqual([
        path,
        status.INVALID_ARGUMENT,
        "INVALID_UTF8",
        field,
      ]);
    }
  });

  it.each([
    ["a truncated message", Buffer.from([0x0a, 0x05, 0x61]), "task_id"],
    ["a string field sent as a varint", varintField(1, 7), "task_id"],
    [
      "a nested message cut short",
      Buffer.concat([bytesField(1, utf8("t")), Buffer.from([0x3a, 0x04, 0x08])]),
      "author",
    ],
  ])(
    "%s is INVALID_ARGUMENT MALFORMED_REQUEST with ErrorInfo and request id, logged and counted",
    async (_name, bytes, field) => {
      const before = await planState(app.plans, taskId);
      const metadata = new Metadata();
      metadata.set("x-request-id", `malformed-${Date.now()}`);
      const { error, details } = await rawCall(app.port, UPDATE, bytes, metadata);
      expect(error?.code).toBe(status.INVALID_ARGUMENT);
      expect(details?.errorInfo?.reason).toBe("MALFORMED_REQUEST");
      expect(details?.errorInfo?.domain).toBe("taskplans");
      expect(details?.errorInfo?.metadata.field).toBe(field);
      const requestId = details?.errorInfo?.metadata.request_id;
      expect(requestId).toBe(metadata.get("x-request-id")[0]);
      expect(
        lines.some(
          (line) =>
            line.includes(`"requestId":"${requestId}"`) && line.includes('"reason":"MALFORMED_REQUEST"'),
        ),
      ).toBe(true);
      const metrics = await (await fetch(`http://127.0.0.1:${app.metricsPort}/metrics`)).text();
      expect(metrics).toMatch(/taskplans_rejections_total\{reason="MALFORMED_REQUEST"\} [1-9]/);
      expect(await planState(app.plans, taskId)).toEqual(before);
    },
  );

  it("expected_version at 2^53 or beyond is rejected naming the field; 2^53 - 1 is read exactly", async () => {
    const before = await planState(app.plans, taskId);
    const replace = (version: bigint) =>
      Buffer.concat([
        bytesField(1, utf8(taskId)),
        bytesField(3, utf8("# New")),
        varintField(4, 1),
        varintField(5, version),
      ]);
    for (const version of [2n ** 53n, 2n ** 64n - 1n]) {
      const { error, details } = await rawCall(app.port, UPDATE, replace(version));
      expect([error?.code, details?.errorInfo?.reason, details?.errorInfo?.metadata.field]).toEqual([
        status.INVALID_ARGUMENT,
        "MALFORMED_REQUEST",
        "expected_version",
      ]);
      expect(error?.details).toContain(`is ${version}, beyond the largest supported value 9007199254740991`);
    }
    const exact = await rawCall(app.port, UPDATE, replace(2n ** 53n - 1n));
    expect(exact.details?.errorInfo?.reason).toBe("VERSION_MISMATCH"); // accepted, compared, stale
    expect(await planState(app.plans, taskId)).toEqual(before);
  });

  it("valid requests through the generated client still work after all that", async () => {
    await app.plans.updatePlan({ taskId, content: "- still fine", mode: APPEND });
    expect((await app.plans.getPlan({ taskId })).plan?.content).toBe("# Plan\n\n- still fine");
  });
});

describe("requests before authentication (auth on)", () => {
  let app: TestApp;
  const { logger, lines } = capturingLogger();
  beforeAll(async () => {
    app = await startTestApp("sqlite", {
      env: { PLAN_AUTH_JWT_SECRET: "wire-input-secret-0123456789-0123456789" },
      overrides: { logger },
    });
  });
  afterAll(() => app.stop());

  it("a malformed request answers MALFORMED_REQUEST, not INTERNAL, even without a token", async () => {
    const { error, details } = await rawCall(app.port, UPDATE, Buffer.from([0x0a, 0x09]));
    expect([error?.code, details?.errorInfo?.reason]).toEqual([status.INVALID_ARGUMENT, "MALFORMED_REQUEST"]);
  });

  it("an unauthenticated call with a 1 MB task_id costs one short log line, without the id", async () => {
    const huge = "x".repeat(1024 * 1024 - 100);
    const before = lines.length;
    for (let i = 0; i < 5; i++) {
      const failure = await rpcError(app.plans.getPlan({ taskId: huge }));
      expect([failure.code, failure.reason]).toEqual([status.UNAUTHENTICATED, "TOKEN_MISSING"]);
    }
    const written = lines.slice(before);
    expect(written).toHaveLength(5);
    for (const line of written) {
      expect(line.length).toBeLessThan(400);
      expect(line).not.toContain("xxxxxxxxxx");
    }
  });
});
