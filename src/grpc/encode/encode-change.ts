import { createHash } from "node:crypto";
import { AuthorKind } from "@taskplans/contract";
import { PlanChange, PlanChangeKind } from "@taskplans/contract";
import type { ChangeKind, StoredChange } from "../../plans/ports/records";
import type { WatchMessage } from "../../watch/watch-service";
import { encodeAuthorKind, encodePlan } from "./encode";

const KIND: Readonly<Record<ChangeKind, PlanChangeKind>> = {
  created: PlanChangeKind.PLAN_CHANGE_KIND_CREATED,
  updated: PlanChangeKind.PLAN_CHANGE_KIND_UPDATED,
  reverted: PlanChangeKind.PLAN_CHANGE_KIND_REVERTED,
  deleted: PlanChangeKind.PLAN_CHANGE_KIND_DELETED,
  "implementation-started": PlanChangeKind.PLAN_CHANGE_KIND_IMPLEMENTATION_STARTED,
  imported: PlanChangeKind.PLAN_CHANGE_KIND_IMPORTED,
};

/** A change's kind on the wire. */
export function encodeChangeKind(kind: ChangeKind): PlanChangeKind {
  return KIND[kind];
}

/** A watch message -> PlanChange; the plan carries its content only when the watch asked for it. */
export function encodeWatchMessage(message: WatchMessage, withContent: boolean): PlanChange {
  if (message.kind === "snapshot") {
    return {
      kind: PlanChangeKind.PLAN_CHANGE_KIND_SNAPSHOT,
      plan: message.plan ? encodePlan(message.plan, withContent) : undefined,
      revision: undefined,
      author: { kind: AuthorKind.AUTHOR_KIND_UNSPECIFIED, name: "" },
      committedAt: message.at,
    };
  }
  const { change } = message;
  // An import that leaves the task without a plan (none, or a deleted one) sends none: a deleted
  // plan's fields would read as an empty plan.
  const noPlan = change.kind === "imported" && change.plan.deleted;
  return {
    kind: encodeChangeKind(change.kind),
    plan: noPlan ? undefined : encodePlan({ ...change.plan, content: change.content ?? "" }, withContent),
    revision: change.revision ?? undefined,
    author: { kind: encodeAuthorKind(change.author.kind), name: change.author.name },
    committedAt: change.committedAt,
  };
}

// One change goes to every watcher of its task on this replica: encode it once per form.
const encoded = new WeakMap<StoredChange, { with?: Buffer; without?: Buffer }>();

/**
 * The wire bytes of a watch message: a change's are shared by every stream that sends it, and a
 * large message equal to one another stream holds is that one's (sharedBytes).
 */
export function watchMessageBytes(message: WatchMessage, withContent: boolean): Buffer {
  if (message.kind === "snapshot")
    return sharedBytes(Buffer.from(PlanChange.encode(encodeWatchMessage(message, withContent)).finish()));
  const forms = encoded.get(message.change) ?? {};
  const key = withContent ? "with" : "without";
  let bytes = forms[key];
  if (!bytes) {
    bytes = sharedBytes(Buffer.from(PlanChange.encode(encodeWatchMessage(message, withContent)).finish()));
    forms[key] = bytes;
    encoded.set(message.change, forms);
  }
  return bytes;
}

/** From this size on, a message is looked up among those the replica's streams hold. */
export const SHARED_FROM_BYTES = 64 * 1024;
// The large messages held now, by the digest of their bytes; an entry goes with its message.
const held = new Map<string, WeakRef<Buffer>>();
const forget = new FinalizationRegistry<string>((digest) => {
  if (held.get(digest)?.deref() === undefined) held.delete(digest);
});

/**
 * `bytes`, or the equal message another stream holds. Streams that read the same version on their
 * own (catch-ups of one task, snapshots of one head) then hold one copy, and every door's form of it
 * is made once and counted once (connect-stream.ts envelopes, watch-buffers.ts): hundreds of
 * streams resuming together no longer each encode a 1.8 MiB JSON form of the same plan, which the
 * allocator kept as resident memory long after it was freed (issue 54). Equal bytes are checked
 * byte for byte, not only by digest.
 */
export function sharedBytes(bytes: Buffer): Buffer {
  if (bytes.length < SHARED_FROM_BYTES) return bytes;
  const digest = createHash("sha256").update(bytes).digest("base64");
  const known = held.get(digest)?.deref();
  if (known?.equals(bytes)) return known;
  held.set(digest, new WeakRef(bytes));
  forget.register(bytes, digest);
  return bytes;
}
