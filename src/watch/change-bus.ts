import type { Broadcast } from "../plans/ports/broadcast";
import type { ChangeNotifier } from "../plans/events";
import type { ChangeRecord } from "../plans/ports/records";
import {
  changeMessage,
  changeMessageTaskId,
  decodeCarriedChange,
  encodeCarriedChange,
  parseChangeMessage,
} from "./change-message";
import type { ChangeHub } from "./change-hub";

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

/**
 * Notifications over a Broadcast every replica hears (Redis pub/sub), carrying the change itself.
 * The local hub hears its own replica's changes at once. A lost message only delays delivery
 * until the hub's next poll.
 */
export function broadcastChangeBus(hub: ChangeHub, broadcast: Broadcast): ChangeBus {
  broadcast.listen((message) => {
    // Every replica hears every change: only those of watched tasks are worth decoding.
    if (!hub.isWatched(changeMessageTaskId(message))) return;
    const parsed = parseChangeMessage(message);
    if (parsed)
      hub.notify(parsed.taskId, parsed.key, parsed.payload ? decodeCarriedChange(parsed.payload) : null);
  });
  return {
    changed(taskId: string, change: ChangeRecord | null) {
      hub.notify(taskId, change, change);
      broadcast.publish(changeMessage(taskId, change, change ? encodeCarriedChange(change) : ""));
    },
    close: () => broadcast.close(),
  };
}
