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
} from "@grpc/grpc-js";
import {
  CreatePlanRequest,
  type CreatePlanRequest as CreatePlanRequestT,
  DeletePlanRequest,
  type DeletePlanResponse,
  EditPlanRequest,
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
} from "../../../generated/ts/taskplans/v1/plan_service";
import {
  CreateTaskRequest,
  type CreateTaskResponse,
  DeleteTaskRequest,
  type DeleteTaskResponse,
  GetTaskRequest,
  type GetTaskResponse,
  TaskServiceClient,
} from "../../../generated/ts/taskplans/v1/task";

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
  /** Milliseconds from now until the call is cancelled with DEADLINE_EXCEEDED; overrides the client default. */
  readonly timeoutMs?: number;
  /** An absolute deadline; overrides `timeoutMs`. */
  readonly deadline?: Date | number;
  /** Extra request metadata (an `authorization` entry here wins over the client's token). */
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

/** Options of `createClient`. */
export interface ClientOptions {
  /** TLS (and mTLS with `certFile` and `keyFile`); without it and `credentials`, plaintext. */
  readonly tls?: TlsOptions;
  /** Channel credentials (instead of `tls`); insecure (plaintext) by default. */
  readonly credentials?: ChannelCredentials;
  /** Bearer token sent as `authorization: Bearer <token>` on every call (JWT with auth on). */
  readonly token?: string;
  /** Deadline of calls that set none, in milliseconds; 30 s by default, 0 for none. */
  readonly defaultTimeoutMs?: number;
  /** grpc-js channel options, laid over this package's defaults (keepalive, read retries). */
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
  revertPlan: Call<RevertPlanRequest, WritePlanResponse>;
  markImplementationStarted: Call<MarkImplementationStartedRequest, MarkImplementationStartedResponse>;
  /**
   * Streams a plan's changes (`for await (const change of watch)`; `watch.cancel()` to stop). A
   * stream has no deadline unless `timeoutMs` or `deadline` is given (the client default does not
   * apply). After it ends with an error, watch again with `afterVersion` set to the last
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
}

/** Both services over one channel. */
export interface TaskPlansClient {
  readonly plans: PlanApi;
  readonly tasks: TaskApi;
  /** Closes the channel; calls in flight fail with CANCELLED. */
  close(): void;
}

/**
 * Retries only reads (idempotent by nature) on UNAVAILABLE. Writes are never retried by the channel:
 * retry them yourself with the same `request_id`, which the server deduplicates.
 */
const SERVICE_CONFIG = {
  methodConfig: [
    {
      name: [
        { service: "taskplans.v1.PlanService", method: "GetPlan" },
        { service: "taskplans.v1.PlanService", method: "ListPlanRevisions" },
        { service: "taskplans.v1.PlanService", method: "GetPlanRevision" },
        { service: "taskplans.v1.TaskService", method: "GetTask" },
      ],
      retryPolicy: {
        maxAttempts: 4,
        initialBackoff: "0.1s",
        maxBackoff: "2s",
        backoffMultiplier: 2,
        retryableStatusCodes: ["UNAVAILABLE"],
      },
    },
  ],
};

/** Channel defaults: keepalive pings within the server's policy, read retries, no message size surprises. */
export const DEFAULT_CHANNEL_OPTIONS: ChannelOptions = {
  "grpc.keepalive_time_ms": 60_000,
  "grpc.keepalive_timeout_ms": 20_000,
  "grpc.service_config": JSON.stringify(SERVICE_CONFIG),
  "grpc.enable_retries": 1,
};

interface RequestType {
  fromPartial(object: never): unknown;
}

const PLAN_REQUESTS: Record<Exclude<keyof PlanApi, "watchPlan">, RequestType> = {
  getPlan: GetPlanRequest,
  createPlan: CreatePlanRequest,
  updatePlan: UpdatePlanRequest,
  editPlan: EditPlanRequest,
  restorePlanRevision: RestorePlanRevisionRequest,
  savePlan: SavePlanRequest,
  deletePlan: DeletePlanRequest,
  listPlanRevisions: ListPlanRevisionsRequest,
  getPlanRevision: GetPlanRevisionRequest,
  revertPlan: RevertPlanRequest,
  markImplementationStarted: MarkImplementationStartedRequest,
};

const TASK_REQUESTS: Record<keyof TaskApi, RequestType> = {
  createTask: CreateTaskRequest,
  getTask: GetTaskRequest,
  deleteTask: DeleteTaskRequest,
};

function tlsCredentials(tls: TlsOptions): ChannelCredentials {
  if ((tls.certFile === undefined) !== (tls.keyFile === undefined))
    throw new Error("createClient: tls.certFile and tls.keyFile go together");
  const read = (file: string | undefined) => (file === undefined ? null : readFileSync(file));
  return credentials.createSsl(read(tls.caFile), read(tls.keyFile), read(tls.certFile));
}

/**
 * Connects to the task-plan service at `target` ("host:port", or any grpc-js target such as
 * "dns:///plans.internal:50051"). Requests may be partial: unset fields take their proto defaults.
 */
export function createClient(target: string, options: ClientOptions = {}): TaskPlansClient {
  if (options.tls && options.credentials) throw new Error("createClient: give tls or credentials, not both");
  const { tls } = options;
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
  const defaults = { token: options.token, timeoutMs: options.defaultTimeoutMs ?? 30_000 };
  return {
    plans: {
      ...promised<Omit<PlanApi, "watchPlan">>(planClient, PLAN_REQUESTS, defaults),
      watchPlan: (request, callOptions = {}) =>
        planClient.watchPlan(
          WatchPlanRequest.fromPartial(request),
          metadataOf(callOptions, defaults.token),
          callOptionsOf(callOptions, 0),
        ),
    },
    tasks: promised<TaskApi>(taskClient, TASK_REQUESTS, defaults),
    close() {
      taskClient.close();
      planClient.close();
    },
  };
}

type Callback = (error: ServiceError | null, response: unknown) => void;
type UnaryMethod = (
  request: unknown,
  metadata: Metadata,
  options: GrpcCallOptions,
  callback: Callback,
) => unknown;

function promised<Api>(
  client: Client,
  requests: Record<string, RequestType>,
  defaults: { token: string | undefined; timeoutMs: number },
): Api {
  const api: Record<string, unknown> = {};
  for (const [name, type] of Object.entries(requests)) {
    const method = (client as unknown as Record<string, UnaryMethod>)[name] as UnaryMethod;
    api[name] = (request: unknown, options: CallOptions = {}) =>
      new Promise((resolve, reject) => {
        method.call(
          client,
          type.fromPartial(request as never),
          metadataOf(options, defaults.token),
          callOptionsOf(options, defaults.timeoutMs),
          (error, response) => (error ? reject(error) : resolve(response)),
        );
      });
  }
  return api as Api;
}

function metadataOf(options: CallOptions, token: string | undefined): Metadata {
  const metadata = options.metadata?.clone() ?? new Metadata();
  if (token !== undefined && metadata.get("authorization").length === 0)
    metadata.set("authorization", `Bearer ${token}`);
  return metadata;
}

function callOptionsOf(options: CallOptions, defaultTimeoutMs: number): GrpcCallOptions {
  if (options.deadline !== undefined) return { deadline: options.deadline };
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
  return timeoutMs > 0 ? { deadline: Date.now() + timeoutMs } : {};
}
