import type { Caller } from "../auth/caller";
import { afterSnapshot, afterVersion, checkResumable } from "../plans/changes/change-rows";
import { loopTurns } from "../plans/changes/loop-turns";
import { PlanError, planErrors } from "../plans/errors";
import { reachableTask } from "../plans/pipeline/reach";
import { requireId } from "../plans/rules/validate";
import type { PlanStore } from "../plans/ports/plan-store";
import type { ChangeKey, HeadRecord, StoredChange } from "../plans/ports/records";
import {
  type ChangeHub,
  type KeptRoom,
  NO_ROOM_KEPT,
  type Subscription,
  type SubscriptionEnd,
} from "./change-hub";

/** What a watch sends: the snapshot it starts with (without after_version), then changes. */
export type WatchMessage =
  | { readonly kind: "snapshot"; readonly plan: HeadRecord | null; readonly at: Date }
  | { readonly kind: "change"; readonly change: StoredChange };

/** The stream a watch writes to. */
export interface WatchStream {
  send(message: WatchMessage): void;
  /** null when the client has been sent everything; else resolves once it has (or the stream ended). */
  drained(): Promise<void> | null;
  /**
   * Room for one more message (`withContent`: one with a plan of the largest size), kept for it until
   * released or sent; null when there is none.
   */
  room?(withContent: boolean): KeptRoom | null;
  /** Ends the stream with an error (a PlanError, or anything else as INTERNAL). */
  fail(error: unknown): void;
}

/** A WatchPlan request, decoded. */
export interface WatchRequest {
  readonly taskId: string;
  readonly afterVersion?: number | undefined;
  readonly includeContent: boolean;
}

/**
 * WatchPlan: reach check (exactly as GetPlan), resume point (a snapshot, or after_version checked
 * against the retained history), then the hub's changes. Each change's version is checked to follow
 * the last one sent, so a gap (history pruned during the catch-up) ends the stream instead of
 * passing unseen; so does a change whose content was asked for and could not be given.
 */
export class WatchService {
  constructor(
    private readonly store: PlanStore,
    private readonly hub: ChangeHub,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async watch(caller: Caller, request: WatchRequest, stream: WatchStream): Promise<Subscription> {
    const taskId = requireId("task_id", request.taskId);
    await reachableTask(this.store, caller, taskId);
    let position: ChangeKey;
    if (request.afterVersion !== undefined) {
      const after = request.afterVersion;
      const [head, oldest] = await Promise.all([
        this.store.getHead(taskId),
        this.store.oldestChangeVersion(taskId),
      ]);
      checkResumable(after, head?.version ?? 0, oldest);
      position = afterVersion(after);
    } else {
      // A snapshot with content is read only for a stream that can take it, in room kept for it.
      const room = request.includeContent && stream.room ? stream.room(true) : NO_ROOM_KEPT;
      if (room === null) throw planErrors.watchTooSlow(null);
      try {
        // Its read and encoding wait for a turn of the loop of their own, as a catch-up's do (change-hub.ts).
        if (request.includeContent) await loopTurns.turn();
        const head = await this.store.getHead(taskId);
        stream.send({ kind: "snapshot", plan: head && !head.deleted ? head : null, at: this.clock() });
        position = afterSnapshot(head);
      } finally {
        room.release();
      }
    }
    let last = position.version;
    let subscription: Subscription | null = null;
    let gap: PlanError | null = null;
    subscription = this.hub.watch(taskId, position, {
      withContent: request.includeContent,
      drained: () => stream.drained(),
      ...(stream.room ? { room: () => stream.room?.(request.includeContent) ?? null } : {}),
      deliver: (change) => {
        if (gap) return;
        // An import starts the task's history again at its own version (which may be lower).
        const follows =
          change.kind === "imported" ||
          (change.step === 0 ? change.version === last + 1 : change.version === last);
        // A change whose content could not be given (what it is derived from was pruned) is lost history too.
        const contentLost =
          request.includeContent &&
          change.kind !== "deleted" &&
          !change.plan.deleted &&
          change.content === null;
        if (!follows || contentLost) {
          gap = planErrors.watchHistoryExpired(last, change.version);
          subscription?.cancel();
          stream.fail(gap);
          return;
        }
        last = change.version;
        stream.send({ kind: "change", change });
      },
      end: (reason) => stream.fail(endError(reason, taskId, last)),
    });
    return subscription;
  }
}

function endError(reason: SubscriptionEnd, taskId: string, lastVersion: number): unknown {
  switch (reason.kind) {
    case "task-deleted":
      return planErrors.taskNotFound(taskId);
    case "closing":
      return planErrors.watchDraining(lastVersion);
    case "read-failed":
      return reason.error; // a port's failure, shaped at the edge like any other
    case "no-room":
      return planErrors.watchTooSlow(lastVersion);
  }
}
