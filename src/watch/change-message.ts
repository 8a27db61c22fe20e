import { type AuthorKind, type ChangeRecord, isChangeKind } from "../storage/records";

/** A change as a notification carries it (JSON; dates as epoch ms). */
export function encodeCarriedChange(change: ChangeRecord): string {
  // The raw value, not `value`: JSON.stringify has already turned a Date into a string by then.
  return JSON.stringify(change, function (this: Record<string, unknown>, key: string, value: unknown) {
    const raw = this[key];
    return raw instanceof Date ? raw.getTime() : value;
  });
}

const DATES = ["createdAt", "updatedAt", "implementationStartedAt"] as const;

/**
 * A carried change, or null when the payload is not one (from another version of the service, say):
 * the hub then reads the change history instead.
 */
export function decodeCarriedChange(payload: string): ChangeRecord | null {
  try {
    const raw = JSON.parse(payload) as Record<string, unknown> & {
      plan?: Record<string, unknown>;
      author?: { kind?: unknown; name?: unknown };
    };
    const plan = raw.plan;
    if (!plan || typeof raw.taskId !== "string" || !isChangeKind(raw.kind)) return null;
    if (!Number.isSafeInteger(raw.version) || (raw.step !== 0 && raw.step !== 1)) return null;
    if (![raw.committedAt, plan.createdAt, plan.updatedAt].every(Number.isSafeInteger)) return null;
    const dates = Object.fromEntries(
      DATES.map((field) => [field, plan[field] === null ? null : new Date(Number(plan[field]))]),
    );
    return {
      ...(raw as unknown as ChangeRecord),
      kind: raw.kind,
      committedAt: new Date(Number(raw.committedAt)),
      plan: { ...(plan as unknown as ChangeRecord["plan"]), ...dates } as ChangeRecord["plan"],
      author: {
        kind: (raw.author?.kind === "user" ? "user" : "agent") as AuthorKind,
        name: String(raw.author?.name ?? ""),
      },
    };
  } catch {
    return null;
  }
}
