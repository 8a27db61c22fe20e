import {
  type sendUnaryData,
  Server,
  type ServerUnaryCall,
  type ServerReadableStream,
  type ServerWritableStream,
  ServerCredentials,
  status,
} from "@grpc/grpc-js";
import {
  BadRequest,
  createClient,
  DEFAULT_RETRY_POLICY,
  DiffPlanRevisionsResponse,
  ExportTaskResponse,
  GetPlanChangesResponse,
  GetPlanResponse,
  historyUnavailableOf,
  ImportOutcome,
  ImportTaskResponse,
  isAlreadyExists,
  isAuthError,
  isHistoryUnavailable,
  isInvalidArgument,
  isMergeConflict,
  isNotFound,
  isPreconditionFailed,
  isRateLimited,
  isRetriable,
  isVersionMismatch,
  isWatchHistoryExpired,
  isWatchTooSlow,
  ListTasksResponse,
  mergeConflictOf,
  type PlanChange,
  PlanChangeKind,
  Plan,
  PlanServiceService,
  TaskPlansError,
  type TaskPlansClient,
  TaskServiceService,
  WriteMode,
  WritePlanResponse,
} from "@taskplans/client";
import { encodeStatusDetails } from "@taskplans/contract";

// The TypeScript package's retries, deadlines, tokens, typed errors and resuming watch, against a
// scripted PlanService: each test says what the server answers, attempt by attempt, and reads what
// the client sent. (The conformance scenario in test/integration/clients/clients.test.ts runs the
// same against the service.)

interface Failure {
  readonly code: status;
  readonly reason?: string;
  readonly retryDelayMs?: number;
  readonly metadata?: Record<string, string>;
  readonly violations?: { field: string; description: string }[];
}
type Answer = Failure | "ok" | "hang";
interface Received {
  readonly method: string;
  readonly request: Record<string, unknown>;
  readonly authorization: string | undefined;
  readonly at: number;
}

const failure = (f: Failure) => ({
  code: f.code,
  details: `scripted ${f.reason ?? "failure"}`,
  metadata: encodeStatusDetails({
    code: f.code,
    message: `scripted ${f.reason ?? "failure"}`,
    errorInfo: f.reason
      ? {
          reason: f.reason,
          domain: "taskplans",
          metadata: { next_action: "Do the next thing.", ...f.metadata },
        }
      : null,
    badRequest: f.violations ? BadRequest.fromPartial({ fieldViolations: f.violations }) : null,
    retryInfo:
      f.retryDelayMs === undefined
        ? null
        : {
            retryDelay: {
              seconds: Math.floor(f.retryDelayMs / 1000),
              nanos: (f.retryDelayMs % 1000) * 1e6,
            },
          },
  }),
});

const plan = (version: number) => Plan.fromPartial({ taskId: "t", version });

class ScriptedServer {
  readonly received: Received[] = [];
  answers: Answer[] = [];
  /** Each WatchPlan call takes the next script: the versions it sends, then how it ends. */
  watches: { versions: number[]; end: Failure | "open" }[] = [];
  private server = new Server();
  port = 0;

  async start(): Promise<void> {
    const unary =
      (method: string, ok: () => unknown) =>
      (call: ServerUnaryCall<Record<string, unknown>, unknown>, callback: sendUnaryData<unknown>) => {
        this.record(method, call.request, call.metadata.get("authorization")[0]);
        const answer = this.answers.shift() ?? "ok";
        if (answer === "hang") return;
        if (answer === "ok") return callback(null, ok());
        callback(failure(answer) as never, null);
      };
    const written = () => WritePlanResponse.fromPartial({ plan: plan(2) });
    this.server.addService(PlanServiceService, {
      getPlan: unary("getPlan", () => GetPlanResponse.fromPartial({ plan: plan(1) })),
      getPlanChanges: unary("getPlanChanges", () =>
        GetPlanChangesResponse.fromPartial({ plan: plan(3), sinceVersion: 1, diff: { diffBytes: 40 } }),
      ),
      diffPlanRevisions: unary("diffPlanRevisions", () =>
        DiffPlanRevisionsResponse.fromPartial({ diff: { linesAdded: 1 } }),
      ),
      updatePlan: unary("updatePlan", written),
      savePlan: unary("savePlan", written),
      createPlan: unary("createPlan", written),
      editPlan: unary("editPlan", written),
      watchPlan: (call: ServerWritableStream<Record<string, unknown>, PlanChange>) => {
        this.record("watchPlan", call.request, call.metadata.get("authorization")[0]);
        const script = this.watches.shift() ?? { versions: [], end: "open" };
        for (const version of script.versions)
          call.write({ kind: PlanChangeKind.PLAN_CHANGE_KIND_UPDATED, plan: plan(version) } as PlanChange);
        // A server stream ends with a status through an "error" event (grpc-js).
        if (script.end !== "open") call.emit("error", failure(script.end));
      },
    } as never);
    // TaskService: the export reads, and ImportTask's client stream (every message it received, in order).
    this.server.addService(TaskServiceService, {
      listTasks: unary("listTasks", () => ListTasksResponse.fromPartial({ tasks: [{ taskId: "t" }] })),
      exportTask: unary("exportTask", () => ExportTaskResponse.fromPartial({ revisionCount: 2 })),
      importTask: (
        call: ServerReadableStream<Record<string, unknown>, unknown>,
        callback: sendUnaryData<unknown>,
      ) => {
        const messages: unknown[] = [];
        call.on("data", (message: unknown) => messages.push(message));
        call.on("end", () => {
          this.record("importTask", { messages }, call.metadata.get("authorization")[0]);
          const answer = this.answers.shift() ?? "ok";
          if (answer === "ok")
            return callback(
              null,
              ImportTaskResponse.fromPartial({ outcome: ImportOutcome.IMPORT_OUTCOME_CREATED }),
            );
          if (answer !== "hang") callback(failure(answer) as never, null);
        });
      },
    } as never);
    this.port = await new Promise((resolve, reject) =>
      this.server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, port) =>
        error ? reject(error) : resolve(port),
      ),
    );
  }

  calls(method: string): Received[] {
    return this.received.filter((r) => r.method === method);
  }

  private record(method: string, request: Record<string, unknown>, authorization: unknown): void {
    this.received.push({
      method,
      request,
      authorization: authorization === undefined ? undefined : String(authorization),
      at: Date.now(),
    });
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.tryShutdown(() => resolve()));
  }
}

async function waitUntil(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}

async function rejection(call: Promise<unknown>): Promise<TaskPlansError> {
  try {
    await call;
  } catch (error) {
    expect(error).toBeInstanceOf(TaskPlansError);
    return error as TaskPlansError;
  }
  throw new Error("expected the call to fail");
}

const FAST = { initialBackoffMs: 10, maxBackoffMs: 40 };

describe("the TypeScript client package against a scripted server", () => {
  let server: ScriptedServer;
  let client: TaskPlansClient;
  const dial = (options: Parameters<typeof createClient>[1] = {}) => {
    client = createClient(`127.0.0.1:${server.port}`, { token: "static", retry: FAST, ...options });
    return client;
  };

  beforeEach(async () => {
    server = new ScriptedServer();
    await server.start();
  });
  afterEach(async () => {
    client?.close();
    await server.stop();
  });

  describe("retries", () => {
    it("retries a read on UNAVAILABLE until it succeeds", async () => {
      server.answers = [
        { code: status.UNAVAILABLE },
        { code: status.UNAVAILABLE, reason: "LOCK_UNAVAILABLE" },
      ];
      const got = await dial().plans.getPlan({ taskId: "t" });
      expect(got.plan?.version).toBe(1);
      expect(server.calls("getPlan")).toHaveLength(3);
    });

    it("sends one generated request_id on every attempt of a write, and keeps the caller's", async () => {
      server.answers = [{ code: status.UNAVAILABLE }, { code: status.ABORTED, reason: "WRITE_CONFLICT" }];
      await dial().plans.updatePlan({ taskId: "t", content: "x" });
      const ids = server.calls("updatePlan").map((c) => c.request.requestId);
      expect(ids).toHaveLength(3);
      expect(new Set(ids).size).toBe(1);
      expect(String(ids[0])).toMatch(/^[0-9a-f-]{36}$/);
      server.answers = [{ code: status.UNAVAILABLE }];
      await client.plans.updatePlan({ taskId: "t", content: "y", requestId: "mine" });
      expect(
        server
          .calls("updatePlan")
          .slice(3)
          .map((c) => c.request.requestId),
      ).toEqual(["mine", "mine"]);
      // A new logical call gets a new id.
      await client.plans.updatePlan({ taskId: "t", content: "x" });
      expect(server.calls("updatePlan")[5]?.request.requestId).not.toBe(ids[0]);
    });

    it.each(["RATE_LIMITED", "WRITE_BUDGET_EXCEEDED", "EXPENSIVE_CALLS_LIMITED"])(
      "waits at least RetryInfo's delay before retrying %s",
      async (reason) => {
        server.answers = [{ code: status.RESOURCE_EXHAUSTED, reason, retryDelayMs: 300 }];
        await dial().plans.updatePlan({ taskId: "t", content: "x" });
        const [first, second] = server.calls("updatePlan");
        expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(290);
      },
    );

    it.each([
      ["VERSION_MISMATCH", status.ABORTED],
      ["HISTORY_QUOTA_EXCEEDED", status.RESOURCE_EXHAUSTED],
      ["REVISION_CHANGED", status.ABORTED],
      ["INVALID_FIELD", status.INVALID_ARGUMENT],
      ["MERGE_CONFLICT", status.ABORTED],
      ["MERGE_NOT_APPLICABLE", status.INVALID_ARGUMENT],
      ["HISTORY_UNAVAILABLE", status.OUT_OF_RANGE],
    ])("never retries %s", async (reason, code) => {
      server.answers = [{ code, reason }];
      const error = await rejection(dial().plans.updatePlan({ taskId: "t", content: "x" }));
      expect([error.code, error.reason]).toEqual([code, reason]);
      expect(server.calls("updatePlan")).toHaveLength(1);
    });

    it("retries getPlanChanges and diffPlanRevisions as the reads they are", async () => {
      server.answers = [{ code: status.UNAVAILABLE }];
      const changes = await dial().plans.getPlanChanges({ taskId: "t", sinceVersion: 1 });
      expect([changes.plan?.version, changes.diff?.diffBytes]).toEqual([3, 40]);
      server.answers = [{ code: status.ABORTED, reason: "WRITE_CONFLICT" }];
      const diff = await client.plans.diffPlanRevisions({
        taskId: "t",
        fromRevisionId: "a",
        toRevisionId: "b",
      });
      expect(diff.diff?.linesAdded).toBe(1);
      expect(server.calls("getPlanChanges").map((c) => c.request.sinceVersion)).toEqual([1, 1]);
      expect(server.calls("diffPlanRevisions")).toHaveLength(2);
    });

    it("retries listTasks and exportTask as reads, and sends importTask's whole stream again on UNAVAILABLE", async () => {
      server.answers = [{ code: status.UNAVAILABLE }];
      expect((await dial().tasks.listTasks({ workspaceId: "ws" })).tasks).toHaveLength(1);
      server.answers = [{ code: status.UNAVAILABLE }];
      expect((await client.tasks.exportTask({ taskId: "t" })).revisionCount).toBe(2);
      server.answers = [{ code: status.UNAVAILABLE }, { code: status.ABORTED, reason: "WRITE_CONFLICT" }];
      const requests = [
        { start: { task: { taskId: "t", workspaceId: "ws" }, revisionCount: 1 } },
        {
          revisions: {
            revisions: [{ revision: { taskId: "t", revisionNumber: 1, content: "x" }, rowVersion: 1 }],
          },
        },
      ];
      const imported = await client.tasks.importTask(requests);
      expect(imported.outcome).toBe(ImportOutcome.IMPORT_OUTCOME_CREATED);
      const attempts = server.calls("importTask").map((c) => c.request.messages as Record<string, unknown>[]);
      expect(attempts).toHaveLength(3);
      for (const messages of attempts)
        expect(messages.map((m) => (m.start ? "start" : "revisions"))).toEqual(["start", "revisions"]);
      expect(server.calls("listTasks")).toHaveLength(2);
      expect(server.calls("exportTask")).toHaveLength(2);
      // A definite refusal is not retried.
      server.answers = [{ code: status.ALREADY_EXISTS, reason: "IMPORT_CONFLICT" }];
      expect((await rejection(client.tasks.importTask(requests))).reason).toBe("IMPORT_CONFLICT");
      expect(server.calls("importTask")).toHaveLength(4);
    });

    it("sends a merge write's one request_id and its merge flag on every attempt", async () => {
      server.answers = [{ code: status.UNAVAILABLE }];
      await dial().plans.editPlan({
        taskId: "t",
        expectedVersion: 1,
        oldText: "a",
        newText: "b",
        merge: true,
      });
      const attempts = server.calls("editPlan").map((c) => [c.request.requestId, c.request.merge]);
      expect(attempts).toHaveLength(2);
      expect(attempts[1]).toEqual(attempts[0]);
      expect(attempts[0]?.[1]).toBe(true);
    });

    it("never retries DEADLINE_EXCEEDED, or a write without a request_id", async () => {
      server.answers = [{ code: status.DEADLINE_EXCEEDED }];
      await rejection(dial().plans.getPlan({ taskId: "t" }));
      expect(server.calls("getPlan")).toHaveLength(1);
      server.answers = [{ code: status.UNAVAILABLE }];
      const error = await rejection(client.plans.savePlan({ taskId: "t", content: "x" }));
      expect(error.code).toBe(status.UNAVAILABLE);
      expect(server.calls("savePlan")).toHaveLength(1);
    });

    it("stops after maxAttempts, with the last error", async () => {
      server.answers = Array.from({ length: 9 }, () => ({
        code: status.UNAVAILABLE,
        reason: "STORAGE_UNAVAILABLE",
      }));
      const error = await rejection(dial().plans.getPlan({ taskId: "t" }));
      expect([error.codeName, error.reason]).toEqual(["UNAVAILABLE", "STORAGE_UNAVAILABLE"]);
      expect(server.calls("getPlan")).toHaveLength(7);
    });

    it("retries a write answered COMMIT_OUTCOME_UNKNOWN with the same request_id, and by default for longer than a database restart", async () => {
      expect(DEFAULT_RETRY_POLICY.maxAttempts).toBe(7);
      let total = 0;
      for (let n = 1; n < DEFAULT_RETRY_POLICY.maxAttempts; n++)
        total += Math.min(
          DEFAULT_RETRY_POLICY.maxBackoffMs,
          DEFAULT_RETRY_POLICY.initialBackoffMs * 2 ** (n - 1),
        );
      // 6.3 s of backoff, at least 5 s with the jitter: a restarted MariaDB answered after 2.2 to 2.5 s.
      expect(total * (1 - DEFAULT_RETRY_POLICY.jitter)).toBeGreaterThanOrEqual(5_000);
      server.answers = [
        { code: status.UNAVAILABLE, reason: "COMMIT_OUTCOME_UNKNOWN" },
        { code: status.UNAVAILABLE, reason: "COMMIT_OUTCOME_UNKNOWN" },
      ];
      await dial().plans.updatePlan({ taskId: "t", content: "x", mode: WriteMode.WRITE_MODE_APPEND });
      const ids = server.calls("updatePlan").map((c) => c.request.requestId as string);
      expect(ids).toHaveLength(3);
      expect(ids[0]).toMatch(/./);
      expect(new Set(ids).size).toBe(1);
    });

    it("stops when the next delay would pass maxElapsedMs or the call's deadline", async () => {
      server.answers = [{ code: status.UNAVAILABLE, retryDelayMs: 5_000 }];
      await rejection(dial({ retry: { ...FAST, maxElapsedMs: 1_000 } }).plans.getPlan({ taskId: "t" }));
      expect(server.calls("getPlan")).toHaveLength(1);
      server.answers = [{ code: status.UNAVAILABLE, retryDelayMs: 2_000 }];
      const error = await rejection(client.plans.getPlan({ taskId: "t" }, { timeoutMs: 1_000 }));
      expect(error.code).toBe(status.UNAVAILABLE); // the last answer, not DEADLINE_EXCEEDED
      expect(server.calls("getPlan")).toHaveLength(2);
    });

    it("makes one attempt with retry: false, and adds no request_id", async () => {
      server.answers = [{ code: status.UNAVAILABLE }];
      await rejection(dial({ retry: false }).plans.getPlan({ taskId: "t" }));
      expect(server.calls("getPlan")).toHaveLength(1);
      // ... and sends a write as it was built: no request_id added.
      await client.plans.updatePlan({ taskId: "t", content: "x" });
      expect(server.calls("updatePlan").map((c) => c.request.requestId)).toEqual([undefined]);
    });
  });

  describe("deadlines", () => {
    it("gives every call the default deadline, and a call's own overrides it", async () => {
      server.answers = ["hang", "hang"];
      const error = await rejection(dial({ defaultTimeoutMs: 200 }).plans.getPlan({ taskId: "t" }));
      expect([error.codeName, error.reason]).toEqual(["DEADLINE_EXCEEDED", ""]);
      const own = await rejection(client.plans.getPlan({ taskId: "t" }, { timeoutMs: 50 }));
      expect(own.codeName).toBe("DEADLINE_EXCEEDED");
      expect(server.calls("getPlan")).toHaveLength(2);
    });
  });

  describe("one deadline over every attempt", () => {
    it("ends a retried call at its deadline, not one deadline per attempt", async () => {
      server.answers = [{ code: status.UNAVAILABLE }, "hang", "hang"];
      const error = await rejection(dial({ defaultTimeoutMs: 1_500 }).plans.getPlan({ taskId: "t" }));
      expect(error.codeName).toBe("DEADLINE_EXCEEDED");
      // The second attempt hangs until the call's deadline; a fresh deadline per attempt would have
      // let a third one start.
      expect(server.calls("getPlan")).toHaveLength(2);
    });
  });

  describe("tokens", () => {
    it("asks the provider before every attempt; a per-call token or authorization wins and skips it", async () => {
      let calls = 0;
      dial({ token: undefined, tokenProvider: async () => `provided-${++calls}` });
      server.answers = [{ code: status.UNAVAILABLE }];
      await client.plans.getPlan({ taskId: "t" });
      await client.plans.getPlan({ taskId: "t" }, { token: "per-call" });
      const { Metadata } = await import("@grpc/grpc-js");
      const metadata = new Metadata();
      metadata.set("authorization", "Bearer from-metadata");
      await client.plans.getPlan({ taskId: "t" }, { metadata });
      expect(server.calls("getPlan").map((c) => c.authorization)).toEqual([
        "Bearer provided-1",
        "Bearer provided-2",
        "Bearer per-call",
        "Bearer from-metadata",
      ]);
      expect(calls).toBe(2);
    });

    it("fails a call UNAUTHENTICATED, without retrying, when the provider throws", async () => {
      dial({ token: undefined, tokenProvider: () => Promise.reject(new Error("idp down")) });
      const error = await rejection(client.plans.getPlan({ taskId: "t" }));
      expect([error.codeName, error.reason]).toEqual(["UNAUTHENTICATED", ""]);
      expect(error.details).toMatch(/idp down/);
      expect(server.calls("getPlan")).toHaveLength(0);
    });
  });

  describe("typed errors", () => {
    it("carry code, reason, metadata, next action, field violations and retry delay", async () => {
      server.answers = [
        {
          code: status.INVALID_ARGUMENT,
          reason: "INVALID_FIELD",
          metadata: { field: "task_id" },
          violations: [{ field: "task_id", description: "is required" }],
          retryDelayMs: 1_500,
        },
      ];
      const error = await rejection(dial().plans.getPlan({ taskId: "" }));
      expect({
        code: error.code,
        codeName: error.codeName,
        reason: error.reason,
        metadata: error.errorInfo?.metadata,
        nextAction: error.nextAction,
        fieldViolations: error.fieldViolations,
        retryDelayMs: error.retryDelayMs,
        message: error.details,
      }).toEqual({
        code: status.INVALID_ARGUMENT,
        codeName: "INVALID_ARGUMENT",
        reason: "INVALID_FIELD",
        metadata: { field: "task_id", next_action: "Do the next thing." },
        nextAction: "Do the next thing.",
        fieldViolations: [{ field: "task_id", description: "is required" }],
        retryDelayMs: 1_500,
        message: "scripted INVALID_FIELD",
      });
    });

    it("answer the reason-group helpers", async () => {
      const cases: [Failure, string[]][] = [
        [{ code: status.ABORTED, reason: "VERSION_MISMATCH" }, ["isVersionMismatch"]],
        [{ code: status.ABORTED, reason: "REVISION_CHANGED" }, ["isVersionMismatch"]],
        [{ code: status.NOT_FOUND, reason: "PLAN_NOT_FOUND" }, ["isNotFound"]],
        [{ code: status.ALREADY_EXISTS, reason: "PLAN_EXISTS" }, ["isAlreadyExists"]],
        [{ code: status.UNAUTHENTICATED, reason: "TOKEN_EXPIRED" }, ["isAuthError"]],
        [{ code: status.PERMISSION_DENIED, reason: "TASK_NOT_REACHABLE" }, ["isAuthError"]],
        [{ code: status.INVALID_ARGUMENT, reason: "FRAGMENT_BLANK" }, ["isInvalidArgument"]],
        [{ code: status.FAILED_PRECONDITION, reason: "PLAN_TOO_LARGE" }, ["isPreconditionFailed"]],
        [{ code: status.RESOURCE_EXHAUSTED, reason: "RATE_LIMITED" }, ["isRateLimited", "isRetriable"]],
        [
          { code: status.RESOURCE_EXHAUSTED, reason: "WRITE_BUDGET_EXCEEDED" },
          ["isRateLimited", "isRetriable"],
        ],
        [{ code: status.RESOURCE_EXHAUSTED, reason: "EXPENSIVE_CALLS_LIMITED" }, ["isRetriable"]],
        [{ code: status.RESOURCE_EXHAUSTED, reason: "HISTORY_QUOTA_EXCEEDED" }, ["isRateLimited"]],
        [{ code: status.ABORTED, reason: "WRITE_CONFLICT" }, ["isRetriable"]],
        [{ code: status.UNAVAILABLE }, ["isRetriable"]],
        [{ code: status.OUT_OF_RANGE, reason: "WATCH_HISTORY_EXPIRED" }, ["isWatchHistoryExpired"]],
        [{ code: status.RESOURCE_EXHAUSTED, reason: "WATCH_TOO_SLOW" }, ["isWatchTooSlow"]],
        [{ code: status.OUT_OF_RANGE, reason: "HISTORY_UNAVAILABLE" }, ["isHistoryUnavailable"]],
        [{ code: status.ABORTED, reason: "MERGE_CONFLICT" }, ["isMergeConflict"]],
        [{ code: status.INVALID_ARGUMENT, reason: "MERGE_NOT_APPLICABLE" }, ["isInvalidArgument"]],
      ];
      const helpers = {
        isVersionMismatch,
        isNotFound,
        isAlreadyExists,
        isAuthError,
        isInvalidArgument,
        isPreconditionFailed,
        isRateLimited,
        isRetriable,
        isWatchHistoryExpired,
        isWatchTooSlow,
        isHistoryUnavailable,
        isMergeConflict,
      };
      dial({ retry: false });
      for (const [answer, expected] of cases) {
        server.answers = [answer];
        const error = await rejection(client.plans.getPlan({ taskId: "t" }));
        const truthy = Object.entries(helpers)
          .filter(([, helper]) => helper(error))
          .map(([name]) => name);
        expect({ reason: answer.reason, truthy }).toEqual({ reason: answer.reason, truthy: expected });
      }
      expect(Object.values(helpers).some((helper) => helper(new Error("not a call")))).toBe(false);
    });
  });

  describe("the metadata of a merge conflict and of unavailable history, typed", () => {
    it("reads MERGE_CONFLICT's versions and regions, and HISTORY_UNAVAILABLE's versions", async () => {
      const conflicts =
        "@@ base lines 3-3 @@\n<<<<<<< yours\n- b\n||||||| base\n- a\n=======\n- c\n>>>>>>> current\n";
      server.answers = [
        {
          code: status.ABORTED,
          reason: "MERGE_CONFLICT",
          metadata: { base_version: "4", current_version: "6", conflict_regions: "1", conflicts },
        },
        {
          code: status.OUT_OF_RANGE,
          reason: "HISTORY_UNAVAILABLE",
          metadata: { since_version: "2", current_version: "9", oldest_version: "5" },
        },
        {
          code: status.OUT_OF_RANGE,
          reason: "HISTORY_UNAVAILABLE",
          metadata: { expected_version: "2", current_version: "9" },
        },
      ];
      dial({ retry: false });
      const conflict = await rejection(client.plans.editPlan({ taskId: "t", merge: true }));
      expect(mergeConflictOf(conflict)).toEqual({
        baseVersion: 4,
        currentVersion: 6,
        conflictRegions: 1,
        conflicts,
      });
      expect(historyUnavailableOf(conflict)).toBeNull();
      const pruned = await rejection(client.plans.getPlanChanges({ taskId: "t", sinceVersion: 2 }));
      expect(historyUnavailableOf(pruned)).toEqual({ version: 2, currentVersion: 9, oldestVersion: 5 });
      expect(mergeConflictOf(pruned)).toBeNull();
      const merge = await rejection(client.plans.updatePlan({ taskId: "t", merge: true }));
      expect(historyUnavailableOf(merge)).toEqual({ version: 2, currentVersion: 9, oldestVersion: null });
      expect(mergeConflictOf(new Error("MERGE_CONFLICT"))).toBeNull();
    });
  });

  describe("watch()", () => {
    const versionsOf = async (watch: AsyncIterable<PlanChange>, count: number) => {
      const seen: number[] = [];
      for await (const change of watch) {
        seen.push(change.plan?.version ?? -1);
        if (seen.length === count) break;
      }
      return seen;
    };

    it("reopens after the last version it yielded when a stream ends UNAVAILABLE, and yields typed changes", async () => {
      server.watches = [
        { versions: [3, 4], end: { code: status.UNAVAILABLE, reason: "WATCH_DRAINING" } },
        { versions: [], end: { code: status.UNAVAILABLE } },
        { versions: [5], end: "open" },
      ];
      const watch = dial().plans.watch("t", { afterVersion: 2 });
      expect(await versionsOf(watch, 3)).toEqual([3, 4, 5]);
      expect(server.calls("watchPlan").map((c) => c.request.afterVersion)).toEqual([2, 4, 4]);
      expect(server.calls("watchPlan").every((c) => c.authorization === "Bearer static")).toBe(true);
    });

    it.each([
      ["WATCH_HISTORY_EXPIRED", status.OUT_OF_RANGE, isWatchHistoryExpired],
      ["WATCH_TOO_SLOW", status.RESOURCE_EXHAUSTED, isWatchTooSlow],
      ["TASK_NOT_FOUND", status.NOT_FOUND, isNotFound],
    ])("ends with the typed error on %s, without reopening", async (reason, code, helper) => {
      server.watches = [{ versions: [7], end: { code, reason, metadata: { resume_after_version: "7" } } }];
      const seen: number[] = [];
      let caught: unknown;
      try {
        for await (const change of dial().plans.watch("t")) seen.push(change.plan?.version ?? -1);
      } catch (error) {
        caught = error;
      }
      expect(seen).toEqual([7]);
      expect(caught).toBeInstanceOf(TaskPlansError);
      expect(helper(caught)).toBe(true);
      expect(server.calls("watchPlan")).toHaveLength(1);
    });

    it("gives up after maxAttempts failures in a row", async () => {
      server.watches = Array.from({ length: 8 }, () => ({ versions: [], end: { code: status.UNAVAILABLE } }));
      let caught: unknown;
      try {
        for await (const _ of dial().plans.watch("t")) void _;
      } catch (error) {
        caught = error;
      }
      expect((caught as TaskPlansError).codeName).toBe("UNAVAILABLE");
      expect(server.calls("watchPlan")).toHaveLength(7);
    });

    it("ends without an error on cancel(), also while it waits to reopen", async () => {
      server.watches = [{ versions: [1], end: "open" }];
      const watch = dial().plans.watch("t");
      const seen: number[] = [];
      for await (const change of watch) {
        seen.push(change.plan?.version ?? -1);
        watch.cancel();
      }
      expect(seen).toEqual([1]);
      // A stream that fails with a long RetryInfo delay: cancel() ends the wait before it is over.
      server.watches = [{ versions: [], end: { code: status.UNAVAILABLE, retryDelayMs: 20_000 } }];
      const waiting = client.plans.watch("t");
      const ended = (async () => {
        for await (const change of waiting) void change;
      })();
      await waitUntil(() => server.calls("watchPlan").length === 2);
      waiting.cancel();
      await ended; // would take 20 s without the cancel, past this test's 10 s timeout
      expect(server.calls("watchPlan")).toHaveLength(2);
    }, 10_000);

    it("sends the watch's own token instead of the client's", async () => {
      server.watches = [{ versions: [1], end: "open" }];
      let asked = 0;
      dial({ token: undefined, tokenProvider: () => `provided-${++asked}` });
      for await (const change of client.plans.watch("t", { token: "own" })) {
        void change;
        break;
      }
      expect(server.calls("watchPlan").map((c) => c.authorization)).toEqual(["Bearer own"]);
      expect(asked).toBe(0);
    });

    it("ends without an error when the client is closed, and later calls fail CANCELLED", async () => {
      server.watches = [{ versions: [1], end: "open" }];
      const watch = dial().plans.watch("t");
      const seen: number[] = [];
      for await (const change of watch) {
        seen.push(change.plan?.version ?? -1);
        client.close();
      }
      expect(seen).toEqual([1]);
      const error = await rejection(client.plans.getPlan({ taskId: "t" }));
      expect([error.codeName, error.reason]).toEqual(["CANCELLED", ""]);
      expect(server.calls("watchPlan")).toHaveLength(1);
    });
  });
});
