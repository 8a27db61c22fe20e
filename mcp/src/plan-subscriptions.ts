import { status } from "@grpc/grpc-js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  ErrorCode,
  McpError,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { decodeStatusDetails } from "@taskplans/client";
import type { PlanGateway } from "./plan-gateway";
import { taskIdOfUri } from "./plan-uri";
import { watchPlanForSubscription } from "./plan-watch";
import { refuseUnsendableToken, resourceError, unknownResource } from "./resource-errors";

/** Most plans one session may be subscribed to at once (each holds one WatchPlan stream). */
export const MAX_SUBSCRIPTIONS = 100;

/**
 * resources/subscribe and resources/unsubscribe for plan URIs: a subscription follows the task's
 * WatchPlan stream (resumed across replica restarts, plan-watch.ts) and sends
 * `notifications/resources/updated` with the URI (and `_meta.version`) for every committed change.
 * Subscribing checks the task is reachable first (an unreachable or missing task is -32002, as a
 * read); a task without a plan yet can be subscribed to (its creation is an update). When a watch
 * ends for good (the task deleted, the token expired) the host gets a last update and a
 * `notifications/message` warning saying why. Every watch ends when the session closes. Must run
 * before `server.connect`; only where the transport can carry notifications (stdio, an HTTP
 * session), since the capability says so.
 */
export function registerPlanSubscriptions(server: McpServer, plans: PlanGateway): void {
  server.server.registerCapabilities({ resources: { subscribe: true } });
  const watches = new Map<string, { cancel(): void }>();
  const updated = (uri: string, version: number | undefined) =>
    server.server
      .sendResourceUpdated({ uri, ...(version === undefined ? {} : { _meta: { version } }) })
      .catch(() => undefined); // the session is gone; its close cancels the watch
  server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    const { uri } = request.params;
    const taskId = taskIdOfUri(uri);
    if (taskId === null) throw unknownResource(uri);
    if (watches.has(uri)) return {}; // subscribing twice is one subscription
    if (watches.size >= MAX_SUBSCRIPTIONS)
      throw new McpError(
        ErrorCode.InvalidRequest,
        `This session is already subscribed to ${MAX_SUBSCRIPTIONS} plans; unsubscribe from one first.`,
      );
    refuseUnsendableToken(plans);
    const known = await currentVersion(plans, taskId, uri);
    if (watches.has(uri)) return {}; // a concurrent subscribe of the same URI won
    const watch = watchPlanForSubscription(plans, taskId, known, {
      updated: (version) => void updated(uri, version),
      ended: (error) => {
        watches.delete(uri);
        void updated(uri, undefined);
        void server.server
          .sendLoggingMessage(
            {
              level: "warning",
              logger: "taskplans.subscriptions",
              data: `The subscription to ${uri} ended: ${resourceError(error, uri).message} Subscribe again to follow the plan.`,
            },
            server.server.transport?.sessionId,
          )
          .catch(() => undefined);
      },
    });
    watches.set(uri, watch);
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    const { uri } = request.params;
    watches.get(uri)?.cancel();
    watches.delete(uri);
    return {};
  });
  const closed = server.server.onclose;
  server.server.onclose = () => {
    for (const watch of watches.values()) watch.cancel();
    watches.clear();
    closed?.();
  };
}

// The plan's version now; undefined when the task has no plan. A missing or unreachable task throws.
async function currentVersion(plans: PlanGateway, taskId: string, uri: string): Promise<number | undefined> {
  try {
    return (await plans.getPlan({ taskId, limit: 1 })).plan?.version;
  } catch (error) {
    const code = (error as { code?: number }).code;
    const metadata = (error as { metadata?: Parameters<typeof decodeStatusDetails>[0] }).metadata;
    const reason = decodeStatusDetails(metadata)?.errorInfo?.reason;
    if (code === status.NOT_FOUND && reason !== "TASK_NOT_FOUND") return undefined; // no plan yet
    throw resourceError(error, uri);
  }
}
