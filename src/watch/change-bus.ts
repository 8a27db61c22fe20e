import { randomUUID } from "node:crypto";
import { every } from "../background/periodic";
import type { Broadcast } from "../plans/ports/broadcast";
import type { ChangeNotifier } from "../plans/pipeline/events";
import type { ChangeRecord } from "../plans/ports/records";
import {
  changeMessage,
  changeMessageTaskId,
  decodeCarriedChange,
  encodeCarriedChange,
  interestMessage,
  parseChangeMessage,
  parseInterestMessage,
} from "./change-message";
import type { ChangeHub } from "./change-hub";
import { RemoteInterest } from "./remote-interest";

/** Carries change notifications to the hubs of every replica. */
export interface ChangeBus extends ChangeNotifier {
  close(): Promise<void>;
}

/** One replica (embedded mode): notifications go straight to the local hub. */
export function localChangeBus(hub: ChangeHub): ChangeBus {
  return {
    changed: (taskId, change) => hub.notify(taskId, change, change),
    close: async () => undefined,
  };
}

/** How replicas tell each other which tasks they watch (see broadcastChangeBus). */
export interface InterestSettings {
  /** How often a replica repeats the tasks it watches. */
  readonly refreshMs: number;
  /** How long an announcement holds without being repeated. */
  readonly ttlMs: number;
  /** When a replica reads a newly watched task's history once more (see ChangeHub.recheck). */
  readonly settleMs: number;
}

export const DEFAULT_INTEREST: InterestSettings = { refreshMs: 2_000, ttlMs: 10_000, settleMs: 300 };

// Task ids per announcement (ids are at most 128 characters: messages stay under about 64 KB).
const IDS_PER_MESSAGE = 500;

/**
 * Notifications over a Broadcast every replica hears (Redis pub/sub), carrying the change itself.
 * The local hub hears its own replica's changes at once. A change is published only when another
 * replica watches its task: replicas announce the tasks they watch (at a task's first watch, then
 * every refreshMs), and most writes, to tasks nobody watches elsewhere, send nothing to Redis.
 * A change committed before its writer heard of a new watch is found by the watching replica's
 * recheck (settleMs after it announced); a lost message only delays delivery until the hub's next poll.
 */
export function broadcastChangeBus(
  hub: ChangeHub,
  broadcast: Broadcast,
  settings: InterestSettings = DEFAULT_INTEREST,
): ChangeBus {
  const instanceId = randomUUID();
  const remote = new RemoteInterest(settings.ttlMs);
  const announce = (taskIds: readonly string[]) => {
    for (let i = 0; i < taskIds.length; i += IDS_PER_MESSAGE)
      broadcast.publish(interestMessage(instanceId, taskIds.slice(i, i + IDS_PER_MESSAGE)));
  };
  broadcast.listen((message) => {
    const interest = parseInterestMessage(message);
    if (interest) {
      if (interest.instanceId !== instanceId) remote.heard(interest.taskIds);
      return;
    }
    // Only the changes of tasks watched here are worth decoding.
    if (!hub.isWatched(changeMessageTaskId(message))) return;
    const parsed = parseChangeMessage(message);
    if (parsed)
      hub.notify(parsed.taskId, parsed.key, parsed.payload ? decodeCarriedChange(parsed.payload) : null);
  });
  const rechecks = new Set<NodeJS.Timeout>();
  hub.onFeedOpened((taskId) => {
    announce([taskId]);
    const timer = setTimeout(() => {
      rechecks.delete(timer);
      hub.recheck(taskId);
    }, settings.settleMs);
    timer.unref();
    rechecks.add(timer);
  });
  const refresher = every(settings.refreshMs, async () => {
    announce(hub.watchedTaskIds());
    remote.sweep();
  });
  return {
    changed(taskId: string, change: ChangeRecord | null) {
      hub.notify(taskId, change, change);
      if (remote.has(taskId))
        broadcast.publish(changeMessage(taskId, change, change ? encodeCarriedChange(change) : ""));
    },
    async close() {
      refresher.stop();
      for (const timer of rechecks) clearTimeout(timer);
      await broadcast.close();
    },
  };
}
