import {
  type CallOptions,
  type ChannelCredentials,
  credentials,
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
  PlanServiceClient,
  RestorePlanRevisionRequest,
  UpdatePlanRequest,
} from "../../generated/ts/taskplans/v1/plan_service";

type Unary<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (error: ServiceError | null, response: Res) => void,
) => unknown;

/** The plan service as the MCP tools use it: the generated client, the caller's token, a deadline. */
export type PlanGateway = ReturnType<typeof planGateway>;

/** Connects the generated gRPC client to `target` (host:port). */
export function connectPlanService(
  target: string,
  creds: ChannelCredentials = credentials.createInsecure(),
): PlanServiceClient {
  return new PlanServiceClient(target, creds);
}

// RFC 6750 b64token: what an Authorization header value can carry after "Bearer ".
const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** Promise-returning calls that forward `token` as `authorization: Bearer` call credentials. */
export function planGateway(client: PlanServiceClient, token: string | undefined, deadlineMs = 15_000) {
  const tokenProblem =
    token && !BEARER_TOKEN.test(token)
      ? "the configured bearer token contains characters a token cannot have (non-ASCII, spaces or punctuation)"
      : null;
  function call<Req, Res>(method: Unary<Req, Res>, request: Req): Promise<Res> {
    const metadata = new Metadata();
    if (token) metadata.set("authorization", `Bearer ${token}`);
    return new Promise((resolve, reject) =>
      method.call(client, request, metadata, { deadline: Date.now() + deadlineMs }, (error, response) =>
        error ? reject(error) : resolve(response),
      ),
    );
  }
  return {
    /** Why the token cannot be sent (checked before every call), or null. */
    tokenProblem: () => tokenProblem,
    getPlan: (r: Partial<GetPlanRequest>) => call(client.getPlan, GetPlanRequest.fromPartial(r)),
    createPlan: (r: Partial<CreatePlanRequest>) => call(client.createPlan, CreatePlanRequest.fromPartial(r)),
    updatePlan: (r: Partial<UpdatePlanRequest>) => call(client.updatePlan, UpdatePlanRequest.fromPartial(r)),
    editPlan: (r: Partial<EditPlanRequest>) => call(client.editPlan, EditPlanRequest.fromPartial(r)),
    deletePlan: (r: Partial<DeletePlanRequest>) => call(client.deletePlan, DeletePlanRequest.fromPartial(r)),
    listRevisions: (r: Partial<ListPlanRevisionsRequest>) =>
      call(client.listPlanRevisions, ListPlanRevisionsRequest.fromPartial(r)),
    getRevision: (r: Partial<GetPlanRevisionRequest>) =>
      call(client.getPlanRevision, GetPlanRevisionRequest.fromPartial(r)),
    restoreRevision: (r: Partial<RestorePlanRevisionRequest>) =>
      call(client.restorePlanRevision, RestorePlanRevisionRequest.fromPartial(r)),
  };
}
