import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { TaskPlansClient } from "@taskplans/client";
import { createPlanMcpServer } from "@taskplans/mcp";

/**
 * The agent session of issue 44's benchmark, through the MCP tools over an in-memory transport whose
 * messages are metered as the agent sees them: the bytes of each JSON-RPC message (UTF-8 JSON, one
 * message per line over stdio, the newline not counted) it sends and receives. The agent reads a
 * checklist plan of `size` bytes at version V; another writer ticks one box (one line of about 40
 * bytes changes);
 * the agent's one-line edit, still based on V, then recovers one of three ways, or is the tick of
 * the neighbouring box, sent with merge=true. Used by
 * bench/changes/ (figures) and test/integration/mcp/mcp.test.ts (the 2 KiB target, bytes only).
 */
export type RecoveryPath =
  | "refusal, full read, edit"
  | "refusal, changes since V, edit"
  | "edit with merge=true"
  | "neighbouring tick, edit with merge=true";
export const RECOVERY_PATHS: readonly RecoveryPath[] = [
  "refusal, full read, edit",
  "refusal, changes since V, edit",
  "edit with merge=true",
  // Issue 56: the agent ticks the box right below the one the other writer ticked (a line merge
  // refused it as one region; a stale exact edit is now re-applied).
  "neighbouring tick, edit with merge=true",
];

/** Bytes the agent sent and received, and the tool calls it made. */
export interface Metered {
  sent: number;
  received: number;
  calls: number;
}

/** The figures of one session: the agent's first read, and the recovery after the other writer's tick. */
export interface SessionBytes {
  readonly read: Metered;
  readonly recovery: Metered;
  /** The plan as the session left it holds both the tick and the agent's edit. */
  readonly bothKept: boolean;
}

/** A checklist of about `size` bytes: "- [ ] step 0001: roll out component 1" lines (about 40 bytes) under a title. */
export function checklist(size: number): string {
  const lines = ["# Release plan", ""];
  for (let step = 1; lines.join("\n").length < size - 45; step++)
    lines.push(`- [ ] step ${String(step).padStart(4, "0")}: roll out component ${step}`);
  return `${lines.join("\n")}\n`;
}

const lineOf = (plan: string, step: number) =>
  plan.split("\n").find((line) => line.startsWith(`- [ ] step ${String(step).padStart(4, "0")}:`)) ?? "";

const textOf = (result: unknown) =>
  ((result as { content?: { type: string; text?: string }[] }).content ?? []).map((b) => b.text ?? "");

/** Runs one session on a new task; `plans` is another writer's client (the one that ticks a box). */
export async function staleEditSession(
  grpc: TaskPlansClient,
  newTask: () => Promise<string>,
  size: number,
  path: RecoveryPath,
  /** Called with every message the agent sends (">") or receives ("<"), and its bytes. */
  log?: (direction: ">" | "<", bytes: number, message: JSONRPCMessage) => void,
): Promise<SessionBytes> {
  const taskId = await newTask();
  const plan = checklist(size);
  await grpc.plans.createPlan({ taskId, content: plan });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createPlanMcpServer({ client: grpc, taskId }).connect(serverSide);
  const agent = new Client({ name: "bench-agent", version: "1.0.0" });
  await agent.connect(clientSide);
  const meter: Metered = { sent: 0, received: 0, calls: 0 };
  const bytes = (message: JSONRPCMessage) => Buffer.byteLength(JSON.stringify(message));
  const send = clientSide.send.bind(clientSide);
  clientSide.send = (message, options) => {
    meter.sent += bytes(message);
    log?.(">", bytes(message), message);
    return send(message, options);
  };
  const deliver = clientSide.onmessage;
  clientSide.onmessage = (message, extra) => {
    meter.received += bytes(message);
    log?.("<", bytes(message), message);
    deliver?.(message, extra);
  };
  const call = async (name: string, args: Record<string, unknown>) => {
    meter.calls++;
    return agent.callTool({ name, arguments: args });
  };
  const snapshot = (): Metered => ({ ...meter });
  try {
    // The agent reads the plan at version V.
    const [metadata = "", content = ""] = textOf(await call("get_task_plan", {}));
    const read = snapshot();
    Object.assign(meter, { sent: 0, received: 0, calls: 0 });
    const version = Number(/"version": (\d+)/.exec(metadata)?.[1]);
    // Another writer ticks one box: one line of about 40 bytes changes.
    const ticked = lineOf(content, 3);
    await grpc.plans.editPlan({
      taskId,
      expectedVersion: version,
      oldText: ticked,
      newText: ticked.replace("- [ ] ", "- [x] "),
      author: { kind: 2, name: "Ana" },
    });
    // The agent's one-line edit, based on V: a line away from the ticked one, or (neighbouring
    // tick) the tick of the box right below it.
    const neighbour = path === "neighbouring tick, edit with merge=true";
    const mine = lineOf(content, neighbour ? 4 : Math.max(6, Math.floor(content.split("\n").length / 2)));
    const edit = {
      old_text: mine,
      new_text: neighbour ? mine.replace("- [ ] ", "- [x] ") : `${mine} - in progress (agent)`,
    };
    if (path === "edit with merge=true" || neighbour) {
      await call("edit_task_plan", { ...edit, expected_version: version, merge: true });
    } else {
      await call("edit_task_plan", { ...edit, expected_version: version }); // refused: VERSION_MISMATCH
      const current =
        path === "refusal, full read, edit"
          ? Number(/"version": (\d+)/.exec(textOf(await call("get_task_plan", {}))[0] ?? "")?.[1])
          : Number(
              /now version (\d+)/.exec(
                textOf(await call("get_task_plan_changes", { since_version: version }))[0] ?? "",
              )?.[1],
            );
      await call("edit_task_plan", { ...edit, expected_version: current });
    }
    const final = (await grpc.plans.getPlan({ taskId })).plan?.content ?? "";
    return {
      read,
      recovery: snapshot(),
      bothKept: final.includes("- [x] step 0003:") && final.includes(edit.new_text),
    };
  } finally {
    await agent.close();
  }
}
