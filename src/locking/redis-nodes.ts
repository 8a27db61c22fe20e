import Redis from "ioredis";
import type { Logger } from "pino";

/**
 * One ioredis command client per Redis node of the lock: commands fail fast while a node is down
 * (no offline queue, one try), reconnects back off up to 1 s, and outages are logged once per
 * outage, not per retry.
 */
export function connectNodes(urls: readonly string[], logger: Logger): Redis[] {
  return urls.map((url) => {
    const client = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2_000,
      // On close, a socket that died with its node never reports closing; don't wait 2 s for it.
      disconnectTimeout: 200,
      retryStrategy: (times) => Math.min(times * 100, 1_000),
    });
    let down = false;
    client.on("error", (error: Error) => {
      if (!down) logger.warn({ node: safeUrl(url), err: error.message }, "redis node unreachable");
      down = true;
    });
    client.on("ready", () => {
      if (down) logger.info({ node: safeUrl(url) }, "redis node reachable again");
      down = false;
    });
    return client;
  });
}

/**
 * A subscriber connection beside each command client (a subscribed connection takes no other
 * command). It queues while reconnecting; the owner subscribes on every "ready" (ioredis's own
 * resubscribe is off: its promise has no handler, so closing a reconnecting subscriber rejected it
 * unhandled, "Connection is closed.").
 */
export function subscribersOf(clients: readonly Redis[]): Redis[] {
  return clients.map((client) => {
    const subscriber = client.duplicate({
      enableOfflineQueue: true,
      maxRetriesPerRequest: null,
      autoResubscribe: false,
    });
    subscriber.on("error", () => undefined); // the command client logs node outages
    return subscriber;
  });
}

// Resolves true once a majority of the clients is ready, false after `ms`.
export function quorumReady(clients: readonly Redis[], ms: number): Promise<boolean> {
  const quorum = Math.floor(clients.length / 2) + 1;
  const enough = () => clients.filter((client) => client.status === "ready").length >= quorum;
  if (enough()) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      for (const client of clients) client.off("ready", check);
      resolve(ok);
    };
    const check = () => {
      if (enough()) done(true);
    };
    const timer = setTimeout(() => done(false), ms);
    for (const client of clients) client.on("ready", check);
  });
}

/**
 * Closes gracefully: QUIT is answered after every command queued before it. Then disconnect, which
 * also stops a client that is reconnecting: its QUIT is refused (no offline queue), and it would
 * otherwise retry forever. At most `ms` for a node that never answers.
 */
export async function quitWithin(client: Redis, ms: number): Promise<void> {
  await settledWithin(client.quit(), ms);
  client.disconnect();
}

// Waits for `promise` (its outcome ignored) or `ms`, whichever comes first. Unlike a race with
// sleep(), the timer is cleared when the promise wins, so nothing outlives the wait (lingering timers
// of up to PLAN_LOCK_WAIT_MS kept processes, Jest workers among them, from exiting).
export async function settledWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, ms))));
  await Promise.race([promise.then(noop, noop), timeout]);
  clearTimeout(timer);
}

const noop = () => undefined;

function safeUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, "//***@");
}
