import type { Logger } from "pino";
import type { Broadcast } from "../plans/ports/broadcast";
import { redisKeys } from "./redis-keys";
import { connectNodes, quitWithin, subscribersOf } from "./redis-nodes";

/**
 * A Broadcast over Redis pub/sub on the channel `<prefix>:changes` of every node: published on one
 * node (the next if it fails) and heard from every node (one subscription per node per replica), so
 * a node down loses nothing while another is up. Connections are made as the lock's are
 * (redis-nodes.ts): commands fail fast while a node is down, subscribers resubscribe on every ready.
 */
export function redisBroadcast(
  settings: { readonly urls: readonly string[]; readonly keyPrefix: string },
  logger: Logger,
): Broadcast {
  const channel = redisKeys(settings.keyPrefix).changes();
  const publishers = connectNodes(settings.urls, logger);
  const subscribers = subscribersOf(publishers);
  const listeners: ((message: string) => void)[] = [];
  for (const subscriber of subscribers) {
    subscriber.on("message", (_channel: string, message: string) => {
      for (const listener of listeners) listener(message);
    });
    subscriber.on("ready", () => void subscriber.subscribe(channel).catch(() => undefined));
  }
  let warned = false;
  const publishOnce = async (message: string): Promise<void> => {
    for (let i = 0; i < publishers.length; i++) {
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
    publish: (message) => void publishOnce(message),
    listen: (onMessage) => void listeners.push(onMessage),
    async close() {
      await Promise.all([...publishers, ...subscribers].map((client) => quitWithin(client, 500)));
    },
  };
}
