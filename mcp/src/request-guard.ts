import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  isJSONRPCRequest,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
} from "@modelcontextprotocol/sdk/types.js";

/** Deepest nesting of a request's `params` that is accepted (the tools' arguments are flat). */
export const MAX_PARAMS_DEPTH = 64;

/**
 * Wraps an MCP transport so that a request whose params are nested more than MAX_PARAMS_DEPTH
 * levels deep, or a `tools/call` whose params are not a tool call (for example `arguments` that is
 * not an object), is answered with JSON-RPC -32602 (invalid params) and one short line saying why,
 * before the SDK sees it. Without it the SDK answers a malformed tool call with -32603 and its whole
 * validation report, and deeply nested arguments overflow the stack of whatever walks them.
 */
export function guardRequests(transport: Transport): Transport {
  return new GuardedTransport(transport);
}

class GuardedTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;

  constructor(private readonly inner: Transport) {
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message, extra) => {
      const problem = problemOf(message);
      if (problem === null) return this.onmessage?.(message, extra);
      // A request gets its answer; anything else this deep cannot be answered and is dropped.
      if (isJSONRPCRequest(message)) {
        const refusal = {
          jsonrpc: "2.0" as const,
          id: message.id,
          error: { code: ErrorCode.InvalidParams, message: problem },
        };
        this.inner.send(refusal).catch((error: unknown) => this.onerror?.(error as Error));
      }
    };
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }
}

// Why the message cannot be handled, or null. The depth is checked first, without recursion, so that
// nothing after it walks a structure deeper than the limit.
function problemOf(message: JSONRPCMessage): string | null {
  const params = "params" in message ? message.params : undefined;
  if (deeperThan(params, MAX_PARAMS_DEPTH))
    return `Invalid params: nested more than ${MAX_PARAMS_DEPTH} levels deep`;
  if (!isJSONRPCRequest(message) || message.method !== "tools/call") return null;
  return toolCallProblem(message);
}

function toolCallProblem(request: JSONRPCRequest): string | null {
  const parsed = CallToolRequestSchema.safeParse(request);
  if (parsed.success) return null;
  const issues = parsed.error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join(".") || "params"}: ${issue.message}`);
  return `Invalid params: ${issues.join("; ")}`;
}

// True when `value` has containers nested more than `limit` levels (the value itself is level 1).
function deeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next;
    if (node === null || typeof node !== "object") continue;
    if (depth > limit) return true;
    for (const child of Object.values(node)) {
      if (child !== null && typeof child === "object") pending.push([child, depth + 1]);
    }
  }
  return false;
}
