import { Metadata } from "@grpc/grpc-js";
import { WriteMode } from "@taskplans/contract";
import { decodeStatusDetails } from "@taskplans/client";
import { type Clients, connect } from "../calls/rpc";
import { type OpRecord, outcomeOf } from "./history";

/** A running workload: its history so far, in-flight counts per replica, and completion. */
export interface Workload {
  readonly history: OpRecord[];
  readonly inFlight: number[];
  done(): Promise<OpRecord[]>;
}

/**
 * Several clients append unique tokens to a few hot tasks through random replicas, mixed with
 * versioned replaces (acknowledging the reduction) and exact edits of a status line.
 */
export function startWorkload(options: {
  ports: readonly number[];
  /** Host of each replica (same order as ports); 127.0.0.1 when omitted. */
  hosts?: readonly string[];
  taskIds: readonly string[];
  clients: number;
  operations: number;
  deadlineMs: number;
  /** Stops issuing operations once it returns true (before `operations` were issued). */
  stop?: () => boolean;
}): Workload {
  const history: OpRecord[] = [];
  const inFlight = options.ports.map(() => 0);
  const connections: Clients[] = options.ports.map((port, i) =>
    connect(port, undefined, options.hosts?.[i] ?? "127.0.0.1"),
  );
  let issued = 0;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T;

  async function runOp(id: number, client: number): Promise<void> {
    const replica = Math.floor(Math.random() * options.ports.length);
    const api = (connections[replica] as Clients).plans;
    const taskId = pick(options.taskIds);
    const roll = Math.random();
    const kind = roll < 0.8 ? "append" : roll < 0.9 ? "replace" : "edit";
    const deadline = () => ({ deadline: Date.now() + options.deadlineMs });
    const record: OpRecord = {
      id,
      taskId,
      replica,
      kind,
      outcome: "unknown",
      payload: {},
      startedAt: Date.now(),
    };
    history.push(record);
    inFlight[replica] = (inFlight[replica] ?? 0) + 1;
    try {
      let response: { plan?: { version: number } };
      if (kind === "append") {
        record.payload.token = `tok-${client}-${id}`;
        response = await api.updatePlan(
          { taskId, content: record.payload.token, mode: WriteMode.WRITE_MODE_APPEND },
          deadline(),
        );
      } else {
        let plan: { content: string; version: number } | undefined;
        try {
          plan = (await api.getPlan({ taskId }, deadline())).plan;
        } catch {
          record.outcome = "failed";
          record.reason = "READ_BEFORE_WRITE_FAILED";
          return;
        }
        if (kind === "replace") {
          record.payload.content = `# Plan\nstatus: 0\nreset-${client}-${id}\n`;
          response = await api.updatePlan(
            {
              taskId,
              content: record.payload.content,
              expectedVersion: plan?.version,
              acknowledgeReduction: true,
            },
            deadline(),
          );
        } else {
          const status = /status: (\d+)/.exec(plan?.content ?? "")?.[1] ?? "0";
          record.payload.oldText = `status: ${status}`;
          record.payload.newText = `status: ${Number(status) + 1}`;
          response = await api.editPlan(
            {
              taskId,
              expectedVersion: plan?.version,
              oldText: record.payload.oldText,
              newText: record.payload.newText,
            },
            deadline(),
          );
        }
      }
      record.outcome = "ok";
      record.version = response.plan?.version;
    } catch (error) {
      recordFailure(record, error);
    } finally {
      record.endedAt = Date.now();
      inFlight[replica] = (inFlight[replica] ?? 1) - 1;
    }
  }

  const clients = Array.from({ length: options.clients }, async (_, client) => {
    while (issued < options.operations && !options.stop?.()) await runOp(issued++, client);
  });
  const finished = Promise.all(clients).then(() => {
    for (const connection of connections) connection.close();
    return history;
  });
  return { history, inFlight, done: () => finished };
}

/** A call that failed: its ErrorInfo reason (or transport code), and whether it may have applied. */
export function recordFailure(record: OpRecord, error: unknown): void {
  const reason = decodeStatusDetails((error as { metadata?: Metadata }).metadata)?.errorInfo?.reason ?? "";
  record.reason = reason || `transport code ${(error as { code?: number }).code}`;
  record.outcome = outcomeOf(reason);
}
