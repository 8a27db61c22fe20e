import {
  type CallOptions,
  credentials,
  type handleUnaryCall,
  Metadata,
  type ServiceError,
} from "@grpc/grpc-js";
import {
  CreatePlanRequest,
  DeletePlanRequest,
  EditPlanRequest,
  GetPlanRequest,
  GetPlanRevisionRequest,
  ListPlanRevisionsRequest,
  MarkImplementationStartedRequest,
  PlanServiceClient,
  type PlanServiceServer,
  RestorePlanRevisionRequest,
  RevertPlanRequest,
  SavePlanRequest,
  UpdatePlanRequest,
} from "../../generated/ts/taskplans/v1/plan_service";
import {
  CreateTaskRequest,
  DeleteTaskRequest,
  GetTaskRequest,
  TaskServiceClient,
  type TaskServiceServer,
} from "../../generated/ts/taskplans/v1/task";
import { decodeStatusDetails } from "../../src/grpc/status-details";

type DeepPartial<T> = T extends Date ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

/** A service as promise-returning methods taking partial requests. */
export type Api<Server> = {
  [K in keyof Server]: Server[K] extends handleUnaryCall<infer Req, infer Res>
    ? (request: DeepPartial<Req>, metadata?: Metadata, options?: CallOptions) => Promise<Res>
    : never;
};

interface Message {
  fromPartial(object: unknown): unknown;
}

const PLAN_REQUESTS: Record<keyof PlanServiceServer, Message> = {
  getPlan: GetPlanRequest,
  createPlan: CreatePlanRequest,
  updatePlan: UpdatePlanRequest,
  savePlan: SavePlanRequest,
  deletePlan: DeletePlanRequest,
  listPlanRevisions: ListPlanRevisionsRequest,
  getPlanRevision: GetPlanRevisionRequest,
  revertPlan: RevertPlanRequest,
  markImplementationStarted: MarkImplementationStartedRequest,
  editPlan: EditPlanRequest,
  restorePlanRevision: RestorePlanRevisionRequest,
};

const TASK_REQUESTS: Record<keyof TaskServiceServer, Message> = {
  createTask: CreateTaskRequest,
  getTask: GetTaskRequest,
  deleteTask: DeleteTaskRequest,
};

/** Generated clients of a server, wrapped as promises. */
export interface Clients {
  readonly plans: Api<PlanServiceServer>;
  readonly tasks: Api<TaskServiceServer>;
  close(): void;
}

/** Connects generated clients to host:port; `token` is sent as a bearer token on every call. */
export function connect(port: number, token?: string, host = "127.0.0.1"): Clients {
  const address = `${host}:${port}`;
  const planClient = new PlanServiceClient(address, credentials.createInsecure());
  const taskClient = new TaskServiceClient(address, credentials.createInsecure());
  return {
    plans: wrap<PlanServiceServer>(planClient, PLAN_REQUESTS, token),
    tasks: wrap<TaskServiceServer>(taskClient, TASK_REQUESTS, token),
    close() {
      planClient.close();
      taskClient.close();
    },
  };
}

function wrap<Server>(client: object, requests: Record<string, Message>, token?: string): Api<Server> {
  const api: Record<string, unknown> = {};
  for (const [name, type] of Object.entries(requests)) {
    api[name] = (request: unknown, metadata?: Metadata, options: CallOptions = {}) =>
      new Promise((resolve, reject) => {
        const md = metadata ?? new Metadata();
        if (token !== undefined && md.get("authorization").length === 0)
          md.set("authorization", `Bearer ${token}`);
        const method = (client as Record<string, (...args: unknown[]) => unknown>)[name];
        method?.call(
          client,
          type.fromPartial(request),
          md,
          options,
          (error: ServiceError | null, response: unknown) => (error ? reject(error) : resolve(response)),
        );
      });
  }
  return api as Api<Server>;
}

/** What a failed call carried: code, message and the rich error details. */
export interface RpcFailure {
  readonly code: number;
  readonly message: string;
  readonly reason: string;
  readonly domain: string;
  readonly metadata: Record<string, string>;
  readonly fieldViolations: readonly { field: string; description: string }[];
}

/** Awaits a call that must fail and returns its decoded error; fails the test if it succeeded. */
export async function rpcError(call: Promise<unknown>): Promise<RpcFailure> {
  let response: unknown;
  try {
    response = await call;
  } catch (error) {
    const serviceError = error as ServiceError;
    const details = decodeStatusDetails(serviceError.metadata);
    return {
      code: serviceError.code,
      message: serviceError.details,
      reason: details?.errorInfo?.reason ?? "",
      domain: details?.errorInfo?.domain ?? "",
      metadata: details?.errorInfo?.metadata ?? {},
      fieldViolations: details?.badRequest?.fieldViolations ?? [],
    };
  }
  throw new Error(`expected the call to fail, it returned ${JSON.stringify(response)}`);
}
