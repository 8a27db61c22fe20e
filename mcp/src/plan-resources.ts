import { status } from "@grpc/grpc-js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  type Resource,
} from "@modelcontextprotocol/sdk/types.js";
import type { Plan } from "@taskplans/client";
import type { PlanGateway } from "./plan-gateway";
import { PLAN_URI_TEMPLATE, planUri, taskIdOfUri } from "./plan-uri";
import { refuseUnsendableToken, resourceError, unknownResource } from "./resource-errors";
import { texts } from "./tool-texts";

/** Tasks looked at per resources/list page (each costs one metadata read of its plan). */
export const RESOURCE_PAGE_SIZE = 50;

const MARKDOWN = "text/markdown";

/**
 * Each plan the caller reaches as an MCP resource, `taskplans://tasks/{task_id}/plan`:
 * resources/list pages through TaskService.ListTasks (the cursor is its page token) and lists the
 * tasks that have a plan; resources/read returns the plan's markdown exactly, with its version in
 * `_meta` (the expected_version of the next write); resources/templates/list names the template, so
 * a host can open any task's plan by id. Must run before `server.connect`.
 */
export function registerPlanResources(server: McpServer, plans: PlanGateway): void {
  server.server.registerCapabilities({ resources: {} });
  server.server.setRequestHandler(ListResourcesRequestSchema, async (request) => {
    refuseUnsendableToken(plans);
    const page = await plans
      .listTasks({ pageSize: RESOURCE_PAGE_SIZE, pageToken: request.params?.cursor ?? "" })
      .catch((error: unknown) => {
        throw resourceError(error);
      });
    // One metadata read per task (limit 1: one character, not the plan), in parallel.
    const heads = await Promise.all(page.tasks.map((task) => headOf(plans, task.taskId)));
    const resources = heads.filter((plan): plan is Plan => plan !== null).map(resourceOf);
    return { resources, ...(page.nextPageToken ? { nextCursor: page.nextPageToken } : {}) };
  });
  server.server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: PLAN_URI_TEMPLATE,
        name: "task-plan",
        title: "A task's plan",
        description: texts.resources.template,
        mimeType: MARKDOWN,
      },
    ],
  }));
  server.server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params;
    const taskId = taskIdOfUri(uri);
    if (taskId === null) throw unknownResource(uri);
    refuseUnsendableToken(plans);
    const read = await plans.getPlan({ taskId }).catch((error: unknown) => {
      throw resourceError(error, uri);
    });
    const { content, ...plan } = read.plan ?? ({ content: "" } as Plan);
    return {
      contents: [{ uri, mimeType: MARKDOWN, text: content, _meta: metaOf(plan as Plan) }],
    };
  });
}

// The plan's metadata, or null when the task has none (never written, or deleted).
async function headOf(plans: PlanGateway, taskId: string): Promise<Plan | null> {
  try {
    return (await plans.getPlan({ taskId, limit: 1 })).plan ?? null;
  } catch (error) {
    if ((error as { code?: number }).code === status.NOT_FOUND) return null;
    throw resourceError(error);
  }
}

function resourceOf(plan: Plan): Resource {
  return {
    uri: planUri(plan.taskId),
    name: `plan of task ${plan.taskId}`,
    ...(plan.title ? { title: plan.title } : {}),
    description: texts.resources.plan,
    mimeType: MARKDOWN,
    size: plan.contentBytes,
    ...(plan.updatedAt ? { annotations: { lastModified: plan.updatedAt.toISOString() } } : {}),
    _meta: metaOf(plan),
  };
}

/**
 * What a host needs beside the text: the version to write against, title, sizes, and the checklist
 * progress the service counted (`{checked, total}`; left out for a plan not counted yet), so that a
 * list of plans shows which are done without reading them.
 */
function metaOf(plan: Plan): Record<string, unknown> {
  return {
    task_id: plan.taskId,
    version: plan.version,
    title: plan.title,
    content_bytes: plan.contentBytes,
    content_chars: plan.contentChars,
    latest_revision_number: plan.latestRevisionNumber,
    ...(plan.checklist
      ? { checklist: { checked: plan.checklist.checked, total: plan.checklist.total } }
      : {}),
    ...(plan.updatedAt ? { updated_at: plan.updatedAt.toISOString() } : {}),
  };
}
