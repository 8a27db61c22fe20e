import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { normalizeArguments } from "./tools/argument-aliases";

type CallToolHandler = (request: CallToolRequest, extra: unknown) => unknown;

/**
 * Makes every tool of `server` accept the argument aliases of tools/argument-aliases.ts and refuse
 * unknown names. Call it before registering any tool. The SDK validates a call's arguments against
 * the tool's zod schema before the tool sees them (and a zod object drops unknown keys silently),
 * so the rule runs where every call passes first: around the SDK's own tools/call handler, which
 * McpServer installs with its first registerTool. The canonical names of each tool are those of the
 * input schema it registers, which stays the only schema tools/list advertises. A refused call is
 * the tool's error result, and no tool ran.
 */
export function acceptArgumentAliases(server: McpServer): void {
  const canonicalOf = new Map<string, readonly string[]>();
  const register = server.registerTool.bind(server);
  server.registerTool = ((name: string, config: { inputSchema?: object }, callback: never) => {
    canonicalOf.set(name, Object.keys(config.inputSchema ?? {}));
    return register(name, config as never, callback);
  }) as unknown as McpServer["registerTool"];

  const low = server.server as unknown as { setRequestHandler: (schema: unknown, handler: unknown) => void };
  const setRequestHandler = low.setRequestHandler.bind(low);
  low.setRequestHandler = (schema, handler) =>
    setRequestHandler(
      schema,
      schema === CallToolRequestSchema ? normalizing(handler as CallToolHandler, canonicalOf) : handler,
    );
}

function normalizing(
  handler: CallToolHandler,
  canonicalOf: ReadonlyMap<string, readonly string[]>,
): CallToolHandler {
  return (request, extra) => {
    const { name, arguments: given } = request.params;
    const canonical = canonicalOf.get(name);
    // An unknown tool, or a call without arguments: the SDK answers as it does today.
    if (canonical === undefined || given === undefined) return handler(request, extra);
    const normalized = normalizeArguments(given, canonical);
    if (!normalized.ok) return refusal(name, normalized.reason, normalized.message);
    return handler({ ...request, params: { ...request.params, arguments: normalized.arguments } }, extra);
  };
}

function refusal(tool: string, reason: string, message: string): CallToolResult {
  return {
    isError: true,
    content: [
      {
        type: "text",
        text:
          `${tool} did not run, so the plan was not read or changed, because of its arguments: ${message}. ` +
          `reason=${reason}; next_action=Retry with each argument given once, under a name the tool accepts.`,
      },
    ],
  };
}
