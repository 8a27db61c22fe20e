import { type ChannelCredentials, Metadata } from "@grpc/grpc-js";
import {
  type CreatePlanRequest,
  createClient,
  type DeletePlanRequest,
  type EditPlanRequest,
  type GetPlanChangesRequest,
  type GetPlanRequest,
  type GetPlanRevisionRequest,
  type ListPlanRevisionsRequest,
  type ListTasksRequest,
  type PartialRequest,
  type RestorePlanRevisionRequest,
  type TaskPlansClient,
  type TlsOptions,
  type UpdatePlanRequest,
  type WatchPlanRequest,
} from "@taskplans/client";

/** The plan service as the MCP tools use it: the client package, the caller's token, a deadline. */
export type PlanGateway = ReturnType<typeof planGateway>;

/**
 * Connects the client package (clients/ts) to `target` (host:port), over TLS when `tls` says so.
 * Without the package's retries: every failure goes back to the agent at once, with the server's
 * next action, and the agent decides (a retry it makes with its request_id is still safe).
 */
export function connectPlanService(
  target: string,
  transport: { credentials?: ChannelCredentials; tls?: TlsOptions } = {},
): TaskPlansClient {
  return createClient(target, { ...transport, retry: false });
}

// RFC 6750 b64token: what an Authorization header value can carry after "Bearer ".
const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** Promise-returning calls that forward `token` as `authorization: Bearer` call metadata. */
export function planGateway(client: TaskPlansClient, token: string | undefined, deadlineMs = 15_000) {
  const tokenProblem =
    token && !BEARER_TOKEN.test(token)
      ? "the configured bearer token contains characters a token cannot have (non-ASCII, spaces or punctuation)"
      : null;
  const options = () => {
    const metadata = new Metadata();
    if (token) metadata.set("authorization", `Bearer ${token}`);
    return { metadata, timeoutMs: deadlineMs };
  };
  const { plans } = client;
  return {
    /** Why the token cannot be sent (checked before every call), or null. */
    tokenProblem: () => tokenProblem,
    getPlan: (r: PartialRequest<GetPlanRequest>) => plans.getPlan(r, options()),
    getChanges: (r: PartialRequest<GetPlanChangesRequest>) => plans.getPlanChanges(r, options()),
    createPlan: (r: PartialRequest<CreatePlanRequest>) => plans.createPlan(r, options()),
    updatePlan: (r: PartialRequest<UpdatePlanRequest>) => plans.updatePlan(r, options()),
    editPlan: (r: PartialRequest<EditPlanRequest>) => plans.editPlan(r, options()),
    deletePlan: (r: PartialRequest<DeletePlanRequest>) => plans.deletePlan(r, options()),
    listRevisions: (r: PartialRequest<ListPlanRevisionsRequest>) => plans.listPlanRevisions(r, options()),
    getRevision: (r: PartialRequest<GetPlanRevisionRequest>) => plans.getPlanRevision(r, options()),
    restoreRevision: (r: PartialRequest<RestorePlanRevisionRequest>) =>
      plans.restorePlanRevision(r, options()),
    /** A page of the tasks the caller reaches (resources/list). */
    listTasks: (r: PartialRequest<ListTasksRequest>) => client.tasks.listTasks(r, options()),
    /** One raw WatchPlan stream, without a deadline (a subscription resumes it: plan-watch.ts). */
    watchPlan: (r: PartialRequest<WatchPlanRequest>) => plans.watchPlan(r, { metadata: options().metadata }),
  };
}
