import { Redis } from "ioredis";
import type { Logger } from "pino";
import { changeMessage, changeMessageTaskId, parseChangeMessage, redisKeys } from "../locking/redis-keys";
import type { ChangeNotifier } from "../plans/events";
import type { ChangeRecord } from "../plans/ports/records";
import { decodeCarriedChange, encodeCarriedChange } from "./change-message";
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
 * Notifications over Redis pub/sub, carrying the change itself: published on one node (the next if
 * it fails) and heard from every node (one subscription per node per replica, whatever the number
 * of watchers), so a node down loses nothing while another is up. The local hub hears its own
 * replica's changes at once. A lost message only delays delivery until the hub's next poll.
 */
export function redisChangeBus(
  hub: ChangeHub,
  settings: { urls: readonly string[]; keyPrefix: string },
  logger: Logger,
): ChangeBus {
  const channel = redisKeys(settings.keyPrefix).changes();
  const options = {
    connectTimeout: 2_000,
    disconnectTimeout: 200,
    retryStrategy: (n: number) => Math.min(n * 100, 1_000),
  };
  const publishers = settings.urls.map(
    (url) => new Redis(url, { ...options, enableOfflineQueue: false, maxRetriesPerRequest: 1 }),
  );
  const subscribers = settings.urls.map((url) => {
    const subscriber = new Redis(url, { ...options, autoResubscribe: false });
    subscriber.on("message", (_channel: string, message: string) => {
      // Every replica hears every change: only those of watched tasks are worth decoding.
      if (!hub.isWatched(changeMessageTaskId(message))) return;
      const parsed = parseChangeMessage(message);
      if (parsed)
        hub.notify(parsed.taskId, parsed.key, parsed.payload ? decodeCarriedChange(parsed.payload) : null);
    });
    // Subscribes on every (re)connection, like the lock's channels (see RedlockTaskLock).
    subscriber.on("ready", () => void subscriber.subscribe(channel).catch(() => undefined));
    return subscriber;
  });
  for (const client of [...publishers, ...subscribers]) client.on("error", () => undefined);
  // Every replica subscribes on every node, so one node that takes the message is enough: try them
  // in turn, starting with the first, until one does.
  let warned = false;
  const publishOnce = async (message: string, from: number): Promise<void> => {
    for (let i = from; i < publishers.length; i++) {
      try {
        await publishers[i]?.publish(channel, message);
        return;
      } catch (error) {
        if (i < publishers.length - 1) continue;
        if (!warned)
          logger.warn({ err: error }, "change notification not published (watchers catch up by polling)");
        warned = true;
      }
    }
  };
  return {
    changed(taskId: string, change: ChangeRecord | null) {
      hub.notify(taskId, change, change);
      const message = changeMessage(taskId, change, change ? encodeCarriedChange(change) : "");
      void publishOnce(message, 0);
    },
    async close() {
      await Promise.all(
        [...publishers, ...subscribers].map(async (client) => {
          await Promise.race([
            client.quit().catch(() => undefined),
            new Promise((r) => setTimeout(r, 500).unref()),
          ]);
          client.disconnect();
        }),
      );
    },
  };
}
