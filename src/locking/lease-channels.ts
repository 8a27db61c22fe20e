import type Redis from "ioredis";
import { parseWaitingMessage, type redisKeys, waitingMessage } from "./redis-keys";

/**
 * The two pub/sub channels of the lock, on every node: `released` wakes a replica waiting for a
 * task at once (instead of after its retry delay), and `waiting` tells the holder that another
 * replica waits, so it hands the lease on after its batch. Messages are published on every node and
 * heard on any; both are hints (a lost one costs a retry delay, never correctness).
 */
export class LeaseChannels {
  private readonly wakers = new Map<string, Set<() => void>>();

  constructor(
    private readonly clients: readonly Redis[],
    subscribers: readonly Redis[],
    private readonly keys: ReturnType<typeof redisKeys>,
    private readonly instanceId: string,
    /** Called when another replica says it waits for `taskId`. */
    private readonly onWaiting: (taskId: string) => void,
  ) {
    for (const subscriber of subscribers) {
      subscriber.on("message", (channel: string, message: string) => this.heard(channel, message));
      subscriber.on("ready", () => {
        subscriber.subscribe(keys.released(), keys.waiting()).catch(() => undefined);
      });
    }
  }

  /**
   * Starts listening for the release of `taskId` (before an attempt, so that an announcement landing
   * while it is in flight is not missed). `announced` resolves on the first one; `stop` when done.
   */
  watchRelease(taskId: string): { readonly announced: Promise<void>; readonly stop: () => void } {
    const wakers = this.wakers.get(taskId) ?? new Set<() => void>();
    this.wakers.set(taskId, wakers);
    let wake = () => undefined as void;
    const announced = new Promise<void>((resolve) => (wake = resolve));
    wakers.add(wake);
    const stop = () => {
      wakers.delete(wake);
      if (wakers.size === 0 && this.wakers.get(taskId) === wakers) this.wakers.delete(taskId);
    };
    return { announced, stop };
  }

  announceReleased(taskId: string): void {
    this.publish(this.keys.released(), taskId);
  }

  announceWaiting(taskId: string): void {
    this.publish(this.keys.waiting(), waitingMessage(this.instanceId, taskId));
  }

  private publish(channel: string, message: string): void {
    for (const client of this.clients) client.publish(channel, message).catch(() => undefined);
  }

  private heard(channel: string, message: string): void {
    if (channel === this.keys.released()) {
      for (const wake of this.wakers.get(message) ?? []) wake();
      return;
    }
    const waiting = parseWaitingMessage(message);
    if (waiting && waiting.instanceId !== this.instanceId) this.onWaiting(waiting.taskId);
  }
}
