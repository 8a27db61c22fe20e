import { expectedAppend } from "./append-oracle";
import type { OpRecord } from "./history";

/** The stored history of one task, read after the run. */
export interface TaskHistory {
  readonly taskId: string;
  readonly head: { content: string; version: number; latestRevisionNumber: number };
  /** Revision contents by number, in order. */
  readonly revisions: readonly { number: number; content: string }[];
}

/** Counts a scenario prints. */
export interface CheckSummary {
  operations: number;
  ok: number;
  failed: number;
  unknown: number;
  unknownApplied: number;
  revisions: number;
}

function apply(op: OpRecord, previous: string): string | null {
  if (op.kind === "append") return expectedAppend(previous, op.payload.token ?? "");
  if (op.kind === "replace") return op.payload.content ?? null;
  const { oldText = "", newText = "" } = op.payload;
  const at = previous.indexOf(oldText);
  if (at === -1 || previous.indexOf(oldText, at + 1) !== -1) return null;
  return previous.slice(0, at) + newText + previous.slice(at + oldText.length);
}

/**
 * Checks the history of a run against the stored state (throws on the first violation):
 * - versions and revision numbers are 1..N, strictly increasing and gap-free; HEAD is revision N;
 * - every revision k > 1 is revision k-1 with exactly one operation applied: the acknowledged one
 *   that reported version k, or else an unknown-outcome one (each used at most once); a failed
 *   operation never explains a revision (so the history replays to HEAD);
 * - every acknowledged append appears exactly once in HEAD unless a later replace removed it;
 *   no failed append appears; an unknown one appears at most once.
 */
export function checkHistory(history: readonly OpRecord[], tasks: readonly TaskHistory[]): CheckSummary {
  const summary: CheckSummary = {
    operations: history.length,
    ok: 0,
    failed: 0,
    unknown: 0,
    unknownApplied: 0,
    revisions: 0,
  };
  for (const op of history) summary[op.outcome]++;
  for (const task of tasks) {
    const ops = history.filter((op) => op.taskId === task.taskId);
    const numbers = task.revisions.map((r) => r.number);
    expectThat(
      numbers.every((n, i) => n === i + 1),
      `${task.taskId}: revision numbers not 1..N: ${numbers.slice(0, 20)}`,
    );
    const last = task.revisions.length;
    summary.revisions += last;
    expectThat(
      task.head.version === last,
      `${task.taskId}: HEAD version ${task.head.version} != ${last} revisions`,
    );
    expectThat(
      task.head.latestRevisionNumber === last,
      `${task.taskId}: latest revision ${task.head.latestRevisionNumber} != ${last}`,
    );
    expectThat(
      task.head.content === task.revisions[last - 1]?.content,
      `${task.taskId}: HEAD differs from revision ${last}`,
    );

    const okByVersion = new Map<number, OpRecord>();
    for (const op of ops.filter((o) => o.outcome === "ok")) {
      expectThat(
        op.version !== undefined && !okByVersion.has(op.version),
        `${task.taskId}: two acknowledged writes share version ${op.version}`,
      );
      okByVersion.set(op.version as number, op);
    }
    const unknown = ops.filter((o) => o.outcome === "unknown");
    const used = new Set<OpRecord>();
    const applied: { version: number; op: OpRecord }[] = [];
    for (let k = 2; k <= last; k++) {
      const previous = task.revisions[k - 2]?.content ?? "";
      const current = task.revisions[k - 1]?.content;
      const acknowledged = okByVersion.get(k);
      let explained: OpRecord | undefined;
      if (acknowledged) {
        expectThat(
          apply(acknowledged, previous) === current,
          `${task.taskId}: revision ${k} is not op ${acknowledged.id} (${acknowledged.kind}) applied to revision ${k - 1}`,
        );
        explained = acknowledged;
      } else {
        explained = unknown.find((op) => !used.has(op) && apply(op, previous) === current);
        expectThat(
          explained !== undefined,
          `${task.taskId}: revision ${k} is explained by no acknowledged or unknown operation`,
        );
        summary.unknownApplied++;
      }
      used.add(explained as OpRecord);
      applied.push({ version: k, op: explained as OpRecord });
    }
    for (const version of okByVersion.keys())
      expectThat(
        version >= 2 && version <= last,
        `${task.taskId}: acknowledged version ${version} not stored`,
      );

    const lines = task.head.content.split("\n");
    const countOf = (token: string) => lines.filter((line) => line === token).length;
    const lastReplace = Math.max(0, ...applied.filter((a) => a.op.kind === "replace").map((a) => a.version));
    for (const op of ops.filter((o) => o.kind === "append")) {
      const count = countOf(op.payload.token ?? "");
      if (op.outcome === "ok") {
        const expected = (op.version ?? 0) > lastReplace ? 1 : 0;
        expectThat(
          count === expected,
          `${task.taskId}: acknowledged append ${op.payload.token} appears ${count} times, expected ${expected}`,
        );
      } else if (op.outcome === "failed") {
        expectThat(count === 0, `${task.taskId}: failed append ${op.payload.token} appears`);
      } else {
        expectThat(count <= 1, `${task.taskId}: unknown append ${op.payload.token} appears ${count} times`);
      }
    }
  }
  return summary;
}

function expectThat(condition: boolean, message: string): void {
  if (!condition) throw new Error(`history check failed: ${message}`);
}
