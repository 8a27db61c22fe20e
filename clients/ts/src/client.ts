import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import {
  type CallOptions as GrpcCallOptions,
  type ChannelCredentials,
  type ChannelOptions,
  type Client,
  type ClientReadableStream,
  credentials,
  Metadata,
  type ServiceError,
  status,
} from "@grpc/grpc-js";
import {
  CreatePlanRequest,
  type CreatePlanRequest as CreatePlanRequestT,
  DeletePlanRequest,
  type DeletePlanResponse,
  DiffPlanRevisionsRequest,
  type DiffPlanRevisionsResponse,
  EditPlanRequest,
  GetPlanChangesRequest,
  type GetPlanChangesResponse,
  GetPlanRequest,
  type GetPlanResponse,
  GetPlanRevisionRequest,
  type GetPlanRevisionResponse,
  ListPlanRevisionsRequest,
  type ListPlanRevisionsResponse,
  MarkImplementationStartedRequest,
  type MarkImplementationStartedResponse,
  PlanServiceClient,
  RestorePlanRevisionRequest,
  type RestorePlanRevisionResponse,
  RevertPlanRequest,
  SavePlanRequest,
  UpdatePlanRequest,
  type PlanChange,
  WatchPlanRequest,
  type WritePlanResponse,
} from "@taskplans/contract";
import {
  CreateTaskRequest,
  type CreateTaskResponse,
  DeleteTaskRequest,
  type DeleteTaskResponse,
  GetTaskRequest,
  type GetTaskResponse,
  ExportTaskRequest,
  type ExportTaskResponse,
  ImportTaskRequest,
  type ImportTaskResponse,
  ListTasksRequest,
  type ListTasksResponse,
  TaskServiceClient,
  RPC_KINDS,
} from "@taskplans/contract";
import { TaskPlansError } from "./errors";
import { DEFAULT_RETRY_POLICY, type RetryPolicy, withRetries } from "./retry";
import { type PlanWatch, resumingWatch, type WatchOptions } from "./watch";

/** A request with every field optional, nested messages included (what `fromPartial` accepts). */
export type PartialRequest<T> = T extends Date
  ? T
  : T extends readonly (infer E)[]
    ? PartialRequest<E>[]
    : T extends object
      ? { [K in keyof T]?: PartialRequest<T[K]> }
      : T;

/** Per-call options. */
export interface CallOptions {
  /** Milliseconds from now until the call (every attempt of it) ends with DEADLINE_EXCEEDED; overrides the client default. */
  readonly timeoutMs?: number;
  /** An absolute deadline; overrides `timeoutMs`. */
  readonly deadline?: Date | number;
  /** This call's bearer token: wins over the client's token or provider (which is then not called). */
  readonly token?: string;
  /** Extra request metadata (an `authorization` entry here wins over the client's token or provider). */
  readonly metadata?: Metadata;
}

/** TLS for `createClient`: PEM files, read when the client is created. */
export interface TlsOptions {
  /** The CA bundle the server's certificate is checked against (default: the system's roots). */
  readonly caFile?: string;
  /** A client certificate chain and its key, for a service that requires mTLS. */
  readonly certFile?: string;
  readonly keyFile?: string;
  /** The name the server's certificate must carry, when not the target's host. */
  readonly serverName?: string;
}

/** Returns the bearer token to send now; called before every attempt of every call. */
export type TokenProvider = () => string | Promise<string>;

/** Options of `createClient`. */
export interface ClientOptions {
  /** TLS (and mTLS with `certFile` and `keyFile`); without it and `credentials`, plaintext. */
  readonly tls?: TlsOptions;
  /** Channel credentials (instead of `tls`); insecure (plaintext) by default. */
  readonly credentials?: ChannelCredentials;
  /** Bearer token sent as `authorization: Bearer <token>` on every call (JWT with auth on). */
  readonly token?: string;
  /** Instead of `token`: the current token, asked for before every attempt (refresh it ahead of expiry). */
  readonly tokenProvider?: TokenProvider;
  /** Deadline of calls that set none, in milliseconds, covering every attempt; 30 s by default, 0 for none. */
  readonly defaultTimeoutMs?: number;
  /** Retries of safe calls (clients/SDK.md); on with DEFAULT_RETRY_POLICY by default, `false` for none. */
  readonly retry?: RetryPolicy | false;
  /** grpc-js channel options, laid over this package's defaults (keepalive). */
  readonly channelOptions?: ChannelOptions;
}

type Call<Req, Res> = (request: PartialRequest<Req>, options?: CallOptions) => Promise<Res>;

/** `taskplans.v1.PlanService` as promises. */
export interface PlanApi {
  getPlan: Call<GetPlanRequest, GetPlanResponse>;
  createPlan: Call<CreatePlanRequestT, WritePlanResponse>;
  updatePlan: Call<UpdatePlanRequest, WritePlanResponse>;
  editPlan: Call<EditPlanRequest, WritePlanResponse>;
  restorePlanRevision: Call<RestorePlanRevisionRequest, RestorePlanRevisionResponse>;
  savePlan: Call<SavePlanRequest, WritePlanResponse>;
  deletePlan: Call<DeletePlanRequest, DeletePlanResponse>;
  listPlanRevisions: Call<ListPlanRevisionsRequest, ListPlanRevisionsResponse>;
  getPlanRevision: Call<GetPlanRevisionRequest, GetPlanRevisionResponse>;
  /** What changed since a version you read: the current version, a unified diff, the changes in between. */
  getPlanChanges: Call<GetPlanChangesRequest, GetPlanChangesResponse>;
  /** A unified diff between two revisions of a task. */
  diffPlanRevisions: Call<DiffPlanRevisionsRequest, DiffPlanRevisionsResponse>;
  revertPlan: Call<RevertPlanRequest, WritePlanResponse>;
  markImplementationStarted: Call<MarkImplementationStartedRequest, MarkImplementationStartedResponse>;
  /**
   * A plan's changes, typed, resumed after the last version received when the stream fails with a
   * retriable error (clients/SDK.md); `cancel()` or `break` ends it.
   */
  watch(taskId: string, options?: WatchOptions): PlanWatch;
  /**
   * One raw WatchPlan stream (`watch()` resumes; this does not). It has no deadline unless
   * `timeoutMs` or `deadline` is given (the client default does not apply); errors are raw grpc-js
   * errors. After it ends with an error, watch again with `afterVersion` set to the last
   * `change.plan.version` received.
   */
  watchPlan(
    request: PartialRequest<WatchPlanRequest>,
    options?: CallOptions,
  ): ClientReadableStream<PlanChange>;
}

/** `taskplans.v1.TaskService` as promises. */
export interface TaskApi {
  createTask: Call<CreateTaskRequest, CreateTaskResponse>;
  getTask: Call<GetTaskRequest, GetTaskResponse>;
  deleteTask: Call<DeleteTaskRequest, DeleteTaskResponse>;
  /** A page of the tasks the caller reaches, in id order (export). */
  listTasks: Call<ListTasksRequest, ListTasksResponse>;
  /** A page of a task's export: the task, its HEAD and the next revisions, contents included. */
  exportTask: Call<ExportTaskRequest, ExportTaskResponse>;
  /**
   * Imports one exported task (operators only): `requests` are the ImportTask stream's messages, a
   * `start` first and then `revisions` (keep each under 1 MiB). The import is idempotent, so the
   * whole stream is sent again on a retriable failure, like a safe unary call.
   */
  importTask(
    requests: readonly PartialRequest<ImportTaskRequest>[],
    options?: CallOptions,
  ): Promise<ImportTaskResponse>;
}

/** Both services over one channel. */
export interface TaskPlansClient {
  readonly plans: PlanApi;
  readonly tasks: TaskApi;
  /**
   * Closes the channel: every `watch()` ends without an error, and a call that has not sent its
   * attempt yet fails CANCELLED (not retried); an attempt already sent finishes.
   */
  close(): void;
}

/**
 * Channel defaults: keepalive pings within the server's policy; reconnects from 100 ms up to 5 s (so
 * a replica that restarts is found again within the retries); no service config from DNS TXT
 * records (this package is the only retry layer).
 */
export const DEFAULT_CHANNEL_OPTIONS: ChannelOptions = {
  "grpc.keepalive_time_ms": 60_000,
  "grpc.keepalive_timeout_ms": 20_000,
  "grpc.initial_reconnect_backoff_ms": 100,
  "grpc.max_reconnect_backoff_ms": 5_000,
  "grpc.service_config_disable_resolution": 1,
};

interface Method {
  readonly request: { fromPartial(object: never): unknown };
  /** Whether a retry cannot apply it twice: a read, or a write with a request_id. */
  readonly safe: boolean;
  /** The write takes a request_id (set once per logical call when the caller gives none). */
  readonly requestId?: boolean;
}

// Whether a call is retried, and whether it takes a request_id, is its rpc_kind option in the proto
// (generated into RPC_KINDS), not written here.
const method = (name: string, request: Method["request"]): Method => {
  const kind = RPC_KINDS[name];
  if (kind === undefined) throw new Error(`${name} has no rpc_kind`);
  return { request, safe: kind.retriable, requestId: kind.requestId };
};

const PLAN_METHODS: Record<Exclude<keyof PlanApi, "watchPlan" | "watch">, Method> = {
  getPlan: method("GetPlan", GetPlanRequest),
  createPlan: method("CreatePlan", CreatePlanRequest),
  updatePlan: method("UpdatePlan", UpdatePlanRequest),
  editPlan: method("EditPlan", EditPlanRequest),
  restorePlanRevision: method("RestorePlanRevision", RestorePlanRevisionRequest),
  savePlan: method("SavePlan", SavePlanRequest),
  deletePlan: method("DeletePlan", DeletePlanRequest),
  listPlanRevisions: method("ListPlanRevisions", ListPlanRevisionsRequest),
  getPlanRevision: method("GetPlanRevision", GetPlanRevisionRequest),
  getPlanChanges: method("GetPlanChanges", GetPlanChangesRequest),
  diffPlanRevisions: method("DiffPlanRevisions", DiffPlanRevisionsRequest),
  revertPlan: method("RevertPlan", RevertPlanRequest),
  markImplementationStarted: method("MarkImplementationStarted", MarkImplementationStartedRequest),
};

const TASK_METHODS: Record<Exclude<keyof TaskApi, "importTask">, Method> = {
  createTask: method("CreateTask", CreateTaskRequest),
  getTask: method("GetTask", GetTaskRequest),
  deleteTask: method("DeleteTask", DeleteTaskRequest),
  listTasks: method("ListTasks", ListTasksRequest),
  exportTask: method("ExportTask", ExportTaskRequest),
};

function tlsCredentials(tls: TlsOptions): ChannelCredentials {
  if ((tls.certFile === undefined) !== (tls.keyFile === undefined))
    throw new Error("createClient: tls.certFile and tls.keyFile go together");
  const readPem = (file: string | undefined) => (file === undefined ? null : readFileSync(file));
  return credentials.createSsl(readPem(tls.caFile), readPem(tls.keyFile), readPem(tls.certFile));
}

// What every call of one client shares.
interface Defaults {
  readonly token: TokenProvider | undefined;
  readonly timeoutMs: number;
  readonly retry: Required<RetryPolicy> | null;
  /** Aborted by `close()`. */
  readonly closed: AbortSignal;
}

/**
 * Connects to the task-plan service at `target` ("host:port", or any grpc-js target such as
 * "dns:///plans.internal:50051"). Requests may be partial: unset fields take their proto defaults.
 * Every failed call rejects with a TaskPlansError.
 */
export function createClient(target: string, options: ClientOptions = {}): TaskPlansClient {
  if (options.tls && options.credentials) throw new Error("createClient: give tls or credentials, not both");
  if (options.token !== undefined && options.tokenProvider)
    throw new Error("createClient: give token or tokenProvider, not both");
  const { tls, token } = options;
  const creds = tls ? tlsCredentials(tls) : (options.credentials ?? credentials.createInsecure());
  const channelOptions = {
    ...DEFAULT_CHANNEL_OPTIONS,
    ...(tls?.serverName ? { "grpc.ssl_target_name_override": tls.serverName } : {}),
    ...options.channelOptions,
  };
  const planClient = new PlanServiceClient(target, creds, channelOptions);
  // The task client shares the plan client's channel.
  const taskClient = new TaskServiceClient(target, creds, {
    ...channelOptions,
    channelOverride: planClient.getChannel(),
  });
  const closing = new AbortController();
  const defaults: Defaults = {
    token: options.tokenProvider ?? (token === undefined ? undefined : () => token),
    timeoutMs: options.defaultTimeoutMs ?? 30_000,
    retry: options.retry === false ? null : { ...DEFAULT_RETRY_POLICY, ...options.retry },
    closed: closing.signal,
  };
  const watchPlan = (
    request: PartialRequest<WatchPlanRequest>,
    metadata: Metadata,
    callOptions: CallOptions,
  ) =>
    planClient.watchPlan(
      WatchPlanRequest.fromPartial(request),
      metadata,
      grpcDeadline(deadlineOf(callOptions, 0)),
    );
  return {
    plans: {
      ...promised<Omit<PlanApi, "watchPlan" | "watch">>(planClient, PLAN_METHODS, defaults),
      watch: (taskId, watchOptions = {}) =>
        resumingWatch(
          async (afterVersion) =>
            watchPlan(
              { taskId, afterVersion, includeContent: watchOptions.includeContent ?? false },
              await metadataOf(watchOptions, defaults.token),
              {},
            ),
          watchOptions,
          defaults.retry,
          closing.signal,
        ),
      watchPlan: (request, callOptions = {}) => {
        const metadata = callOptions.metadata?.clone() ?? new Metadata();
        if (callOptions.token !== undefined) metadata.set("authorization", `Bearer ${callOptions.token}`);
        else if (defaults.token && metadata.get("authorization").length === 0) {
          // A stream opens at once, so only a provider that answers at once can serve it.
          const current = defaults.token();
          if (typeof current !== "string")
            throw new Error("watchPlan: an async tokenProvider needs watch() or a per-call token");
          metadata.set("authorization", `Bearer ${current}`);
        }
        return watchPlan(request, metadata, callOptions);
      },
    },
    tasks: {
      ...promised<Omit<TaskApi, "importTask">>(taskClient, TASK_METHODS, defaults),
      importTask: (requests, callOptions = {}) => importStream(taskClient, requests, callOptions, defaults),
    },
    close() {
      closing.abort(); // ends every watch() first, so none reopens on the closed channel
      taskClient.close();
      planClient.close();
    },
  };
}

// ImportTask: the whole client stream is one attempt, sent again on a retriable failure (safe: an
// import of a task stored exactly so changes nothing).
function importStream(
  client: TaskServiceClient,
  partials: readonly PartialRequest<ImportTaskRequest>[],
  options: CallOptions,
  defaults: Defaults,
): Promise<ImportTaskResponse> {
  const requests = partials.map((partial) => ImportTaskRequest.fromPartial(partial as never));
  const deadline = deadlineOf(options, defaults.timeoutMs);
  return withRetries(defaults.retry, deadline, async () => {
    if (defaults.closed.aborted) throw new TaskPlansError(status.CANCELLED, "the client was closed");
    const metadata = await metadataOf(options, defaults.token);
    return new Promise<ImportTaskResponse>((resolve, reject) => {
      const stream = client.importTask(metadata, grpcDeadline(deadline), (error, response) =>
        error ? reject(TaskPlansError.from(error)) : resolve(response),
      );
      let next = 0;
      const write = () => {
        for (let request = requests[next]; request !== undefined; request = requests[next]) {
          next++;
          if (!stream.write(request)) {
            stream.once("drain", write);
            return;
          }
        }
        stream.end();
      };
      write();
    });
  });
}

type Callback = (error: ServiceError | null, response: unknown) => void;
type UnaryMethod = (
  request: unknown,
  metadata: Metadata,
  options: GrpcCallOptions,
  callback: Callback,
) => unknown;

function promised<Api>(client: Client, methods: Record<string, Method>, defaults: Defaults): Api {
  const api: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(methods)) {
    const unary = (client as unknown as Record<string, UnaryMethod>)[name] as UnaryMethod;
    api[name] = (partial: Record<string, unknown>, options: CallOptions = {}) => {
      const request = method.request.fromPartial(
        (method.requestId && defaults.retry && !partial.requestId
          ? { ...partial, requestId: randomUUID() }
          : partial) as never,
      );
      const deadline = deadlineOf(options, defaults.timeoutMs);
      return withRetries(method.safe ? defaults.retry : null, deadline, async () => {
        if (defaults.closed.aborted) throw new TaskPlansError(status.CANCELLED, "the client was closed");
        const metadata = await metadataOf(options, defaults.token);
        return new Promise((resolve, reject) => {
          unary.call(client, request, metadata, grpcDeadline(deadline), (error, response) =>
            error ? reject(TaskPlansError.from(error)) : resolve(response),
          );
        });
      });
    };
  }
  return api as Api;
}

// The call's metadata: the per-call token or `authorization` entry, else the client's token.
async function metadataOf(
  options: Pick<CallOptions, "token" | "metadata">,
  token: TokenProvider | undefined,
): Promise<Metadata> {
  const metadata = options.metadata?.clone() ?? new Metadata();
  if (options.token !== undefined) metadata.set("authorization", `Bearer ${options.token}`);
  else if (token !== undefined && metadata.get("authorization").length === 0) {
    let current: string;
    try {
      current = await token();
    } catch (error) {
      throw new TaskPlansError(status.UNAUTHENTICATED, `the token provider failed: ${String(error)}`);
    }
    metadata.set("authorization", `Bearer ${current}`);
  }
  return metadata;
}

// The logical call's deadline in ms since the epoch, or undefined for none.
function deadlineOf(options: CallOptions, defaultTimeoutMs: number): number | undefined {
  if (options.deadline !== undefined) return new Date(options.deadline).getTime();
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
  return timeoutMs > 0 ? Date.now() + timeoutMs : undefined;
}

const grpcDeadline = (deadline: number | undefined): GrpcCallOptions =>
  deadline === undefined ? {} : { deadline };
