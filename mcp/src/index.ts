/**
 * @taskplans/mcp: the task-plan service's tools for AI agents over the Model Context Protocol, a
 * client of the service through `@taskplans/client`. The `taskplans-mcp` bin (dist/main.js) serves
 * them over stdio or Streamable HTTP; these exports embed them in another host.
 */
export { createPlanMcpServer } from "./mcp-server";
export { type HttpAllowList, loopbackAllowList, MAX_BODY_BYTES, startMcpHttpServer } from "./http-server";
export { connectPlanService, type PlanGateway } from "./plan-gateway";
export { guardRequests, MAX_PARAMS_DEPTH } from "./request-guard";
export { CONFIGURE_TOKEN, fromGrpcError } from "./tool-results";
export { checklistNote } from "./tool-texts";
export {
  aliasesOf,
  aliasTable,
  normalizeArguments,
  type NormalizedArguments,
} from "./tools/argument-aliases";
export { MAX_SESSIONS, SESSION_IDLE_MS } from "./http-sessions";
export { MAX_SUBSCRIPTIONS } from "./plan-subscriptions";
