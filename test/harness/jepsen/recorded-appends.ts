import { WriteMode } from "@taskplans/contract";
import { connect } from "../calls/rpc";
import type { OpRecord } from "./history";
import { recordFailure, type Workload } from "./workload";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One append through `replica` recorded in the workload's history (so the checker holds it to the
 * same rules as the workload's own): its version when acknowledged, null otherwise.
 */
export async function recordedAppend(
  workload: Workload,
  client: ReturnType<typeof connect>,
  index: number,
  taskId: string,
): Promise<number | null> {
  const id = 1_000_000 + workload.history.length;
  const record: OpRecord = {
    id,
    taskId,
    replica: index,
    kind: "append",
    outcome: "unknown",
    payload: { token: `probe-${id}` },
    startedAt: Date.now(),
  };
  workload.history.push(record);
  try {
    const answer = await client.plans.updatePlan(
      { taskId, content: record.payload.token, mode: WriteMode.WRITE_MODE_APPEND },
      { deadline: Date.now() + 3_000 },
    );
    [record.outcome, record.version] = ["ok", answer.plan?.version];
    return answer.plan?.version ?? null;
  } catch (error) {
    recordFailure(record, error);
    return null;
  } finally {
    record.endedAt = Date.now();
  }
}

/**
 * Appends to each task through `replica` every 200 ms from now until each has one acknowledged
 * append, recording every attempt in the workload's history (so the checker holds them to it):
 * the time from `from` to the slowest task's first acknowledged append, or null after `withinMs`.
 */
export async function firstWritesAfter(
  workload: Workload,
  replica: { readonly host: string; readonly port: number },
  index: number,
  taskIds: readonly string[],
  from: number,
  withinMs: number,
): Promise<number | null> {
  const client = connect(replica.port, undefined, replica.host);
  try {
    const firsts = await Promise.all(
      taskIds.map(async (taskId) => {
        while (Date.now() - from < withinMs) {
          if ((await recordedAppend(workload, client, index, taskId)) !== null) return Date.now() - from;
          await sleep(200);
        }
        return null;
      }),
    );
    return firsts.some((ms) => ms === null) ? null : Math.max(...(firsts as number[]));
  } finally {
    client.close();
  }
}
