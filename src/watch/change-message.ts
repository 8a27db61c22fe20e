import { type PlanJson, planFromJson, planToJson } from "../plans/ports/plan-json";
import { type ChangeRecord, isChangeKind } from "../plans/ports/records";

/** A change as a notification carries it (JSON; dates as epoch ms, the plan as its row stores it). */
export function encodeCarriedChange(change: ChangeRecord): string {
  return JSON.stringify({
    ...change,
    committedAt: change.committedAt.getTime(),
    plan: planToJson(change.plan),
  });
}

/**
 * A carried change, or null when the payload is not one (from another version of the service, say):
 * the hub then reads the change history instead.
 */
export function decodeCarriedChange(payload: string): ChangeRecord | null {
  try {
    const raw = JSON.parse(payload) as Partial<Omit<ChangeRecord, "committedAt" | "plan">> & {
      committedAt?: unknown;
      plan?: PlanJson;
    };
    const { plan } = raw;
    if (!plan || typeof raw.taskId !== "string" || !isChangeKind(raw.kind)) return null;
    if (!Number.isSafeInteger(raw.version) || (raw.step !== 0 && raw.step !== 1)) return null;
    if (![raw.committedAt, plan.createdAt, plan.updatedAt].every(Number.isSafeInteger)) return null;
    return {
      taskId: raw.taskId,
      version: raw.version as number,
      step: raw.step,
      kind: raw.kind,
      committedAt: new Date(raw.committedAt as number),
      plan: planFromJson(plan),
      revision: raw.revision ?? null,
      author: { kind: raw.author?.kind === "user" ? "user" : "agent", name: String(raw.author?.name ?? "") },
    };
  } catch {
    return null;
  }
}

/**
 * A change notification: the task id, a tab, "version.step" of the change or "-" when it has none,
 * then optionally a tab and a payload (the change itself, so that watchers need not read it).
 */
export function changeMessage(
  taskId: string,
  key: { version: number; step: number } | null,
  payload = "",
): string {
  const head = `${taskId}\t${key === null ? "-" : `${key.version}.${key.step}`}`;
  return payload === "" ? head : `${head}\t${payload}`;
}

/** The task id of a changeMessage, read without parsing the rest ("" when it has none). */
export function changeMessageTaskId(message: string): string {
  const tab = message.indexOf("\t");
  return tab < 0 ? "" : message.slice(0, tab);
}

/** Parses changeMessage; null for anything else. */
export function parseChangeMessage(message: string): {
  taskId: string;
  key: { version: number; step: 0 | 1 } | null;
  payload: string;
} | null {
  const match = /^([^\t]+)\t(?:-|(\d+)\.([01]))(?:\t([\s\S]*))?$/.exec(message);
  if (!match?.[1]) return null;
  const [, taskId, version, step, payload = ""] = match;
  if (version === undefined) return { taskId, key: null, payload };
  return { taskId, key: { version: Number(version), step: step === "1" ? 1 : 0 }, payload };
}

// An interest message starts where a change message has its task id: an empty one, which replicas
// of an earlier version take for a task nobody watches, and ignore.
const INTEREST = "\twatching\t";

/**
 * What a replica announces about the tasks its watchers follow: its instance id, then the task ids
 * separated by spaces (ids have no whitespace).
 */
export function interestMessage(instanceId: string, taskIds: readonly string[]): string {
  return `${INTEREST}${instanceId}\t${taskIds.join(" ")}`;
}

/** Parses interestMessage; null for anything else (a change message among them). */
export function parseInterestMessage(message: string): { instanceId: string; taskIds: string[] } | null {
  if (!message.startsWith(INTEREST)) return null;
  const rest = message.slice(INTEREST.length);
  const tab = rest.indexOf("\t");
  if (tab <= 0) return null;
  return {
    instanceId: rest.slice(0, tab),
    taskIds: rest
      .slice(tab + 1)
      .split(" ")
      .filter(Boolean),
  };
}
