import { every } from "../background/periodic";
import { loopTurns } from "../plans/changes/loop-turns";
import type { Logger } from "pino";
import {
  compareChangeKeys,
  followsDirectly,
  type LastChange,
  lastChangeOf,
} from "../plans/changes/change-rows";
import type { ChangeKey, ChangeRecord, StoredChange } from "../plans/ports/records";

/** What the hub reads: the change history (implemented by PlanStore). */
export interface ChangeSource {
  readChanges(taskId: string, after: ChangeKey, limit: number, withContent: boolean): Promise<StoredChange[]>;
  /** For each given task that exists: its newest change key (null when it has none). */
  watchedTaskStates(taskIds: readonly string[]): Promise<Map<string, ChangeKey | null>>;
}

/** Room kept for a message while it is read (and sent): let go with `release()`. */
export interface KeptRoom {
  release(): void;
}

/** One stream's end of a subscription. */
export interface ChangeSubscriber {
  /** Whether the changes it receives must carry the plan content. */
  readonly withContent: boolean;
  /** Receives the next change, in key order, each exactly once. Must not throw or block. */
  deliver(change: StoredChange): void;
  /**
   * null when everything delivered has reached the client; else resolves once it has (or the
   * subscriber ended). A catch-up waits on it before each change, so it runs at the client's pace.
   */
  drained(): Promise<void> | null;
  /**
   * Room in the replica's watch memory (watch-buffers.ts) for one more change, kept for it until
   * released; null when there is none. A catch-up takes it before each read of the history and lets
   * it go once the page is delivered, and ends the subscription `no-room` instead of reading what
   * could not be sent.
   */
  room?(): KeptRoom | null;
  /** The subscription ended: the task was deleted, reading failed, or the hub closed. */
  end(reason: SubscriptionEnd): void;
}

/** Why the hub ended a subscription. */
export type SubscriptionEnd =
  | { readonly kind: "task-deleted" }
  | { readonly kind: "read-failed"; readonly error: unknown }
  | { readonly kind: "closing" }
  | { readonly kind: "no-room" };

/** A subscription, to cancel it. */
export interface Subscription {
  cancel(): void;
}

interface Watch {
  readonly subscriber: ChangeSubscriber;
  /** Key of the last change delivered (or the start position). */
  position: ChangeKey;
  /** The import whose history `position` is in (the last `imported` change delivered), if any. */
  imported: ChangeRecord | null;
  /** Whether the feed delivers to it; until then it catches up on its own (catchUp). */
  live: boolean;
  ended: boolean;
}

/** The watches of one task: one reader of the change history serves them all. */
interface Feed {
  readonly taskId: string;
  readonly watches: Set<Watch>;
  /** Key of the last change the feed read; null until a watch finished catching up. */
  cursor: ChangeKey | null;
  /** The change at the cursor, when the feed delivered it (not when a catch-up set the cursor). */
  last: LastChange | null;
  reading: boolean;
  /** The newest change key notified: the feed reads until its cursor reaches it. */
  wanted: ChangeKey | null;
  /** Read again whatever the cursor (a notification without a key, or a full page). */
  again: boolean;
  /** Check that the task still exists when a read finds nothing (a keyless notification). */
  checkExists: boolean;
  /** Raised when an import replaced the task's history: a read begun before it is discarded. */
  epoch: number;
}

const PAGE = 100;
// With content, a page holds up to this many plans (each up to the 256 KiB limit): a catch-up keeps
// its page while its client reads it, so the page is what a watch costs on top of its stream.
const CONTENT_PAGE = 4;

const pageSize = (withContent: boolean) => (withContent ? CONTENT_PAGE : PAGE);
// A catch-up whose client has not taken its last change within this time lets the rest of its page
// go, and reads it again once the client has: a client that does not read holds no page.
const PAGE_HOLD_MS = 1_000;

/** How a catch-up's page went: read to its end (`full` when it had `limit` changes), or let go. */
type PageOutcome =
  | { readonly kind: "read"; readonly full: boolean; readonly taken: boolean }
  | { readonly kind: "ended" }
  | { readonly kind: "stalled"; readonly drained: Promise<void> };

/**
 * Fans committed changes out to every watch of this replica. Per task, one feed reads the change
 * history after its cursor when a notification (local or from another replica) or the periodic poll
 * says there is more, and hands each change to every watch; a notification that carries the very
 * next change (followsDirectly) spares the read. A new watch first reads its own way up from its
 * resume point at its client's pace, then joins the feed. The change history is the source of
 * truth: notifications only say what to read, so a lost one delays delivery until the next poll.
 */
export class ChangeHub {
  private readonly feeds = new Map<string, Feed>();
  private readonly feedListeners: ((taskId: string) => void)[] = [];
  private readonly poller: { stop(): void };
  private closed = false;

  constructor(
    private readonly source: ChangeSource,
    private readonly logger: Logger,
    pollIntervalMs: number,
  ) {
    this.poller = every(pollIntervalMs, () => this.poll());
  }

  /** Number of live watches (for metrics and tests). */
  get watchCount(): number {
    let count = 0;
    for (const feed of this.feeds.values()) count += feed.watches.size;
    return count;
  }

  /** Whether any watch of this replica follows `taskId` (notifications of other tasks are ignored). */
  isWatched(taskId: string): boolean {
    return this.feeds.has(taskId);
  }

  /** The tasks this replica's watches follow. */
  watchedTaskIds(): string[] {
    return [...this.feeds.keys()];
  }

  /** Calls `listener` each time a task gets its first watch on this replica. */
  onFeedOpened(listener: (taskId: string) => void): void {
    this.feedListeners.push(listener);
  }

  /**
   * Reads the task's history once more (after a catch-up still running, if one is): for a change
   * committed while the other replicas did not yet know this one watches it.
   */
  recheck(taskId: string): void {
    const feed = this.feeds.get(taskId);
    if (!feed) return;
    feed.again = true;
    void this.read(feed);
  }

  /** Watches `taskId` from `after` (exclusive): every change after it, in order, exactly once. */
  watch(taskId: string, after: ChangeKey, subscriber: ChangeSubscriber): Subscription {
    if (this.closed) {
      subscriber.end({ kind: "closing" });
      return { cancel: () => undefined };
    }
    let feed = this.feeds.get(taskId);
    if (!feed) {
      feed = {
        taskId,
        watches: new Set(),
        cursor: null,
        last: null,
        reading: false,
        wanted: null,
        again: false,
        checkExists: false,
        epoch: 0,
      };
      this.feeds.set(taskId, feed);
      for (const listener of this.feedListeners) listener(taskId);
    }
    const watch: Watch = { subscriber, position: after, imported: null, live: false, ended: false };
    feed.watches.add(watch);
    void this.catchUp(feed, watch);
    return { cancel: () => this.remove(feed, watch) };
  }

  /**
   * A change of `taskId` committed (key null: something committed that has no change of its own,
   * such as a task delete). Watched tasks read their history; others are ignored.
   */
  notify(taskId: string, key: ChangeKey | null, carried: ChangeRecord | null = null): void {
    const feed = this.feeds.get(taskId);
    if (!feed) return;
    if (carried?.kind === "imported") return this.restart(feed, carried);
    if (carried && this.takeCarried(feed, carried)) return;
    if (key === null) {
      feed.again = true;
      feed.checkExists = true;
    } else {
      // Repeats (this replica's own change, heard back from Redis) are dropped here or by the read loop.
      if (feed.cursor !== null && compareChangeKeys(key, feed.cursor) <= 0) return;
      if (feed.wanted === null || compareChangeKeys(key, feed.wanted) > 0) feed.wanted = key;
    }
    void this.read(feed);
  }

  // An import replaced the task's change history, which starts again at its `imported` change,
  // whose version may be lower than what the feed and its watches were at: they go back to the
  // start of the history and read it (with content where a watch asks for it), so every watch
  // receives the import and what followed it; a read begun before is discarded (epoch). A watch
  // that already received `imported` itself (read by the poll or for another notification before
  // this one arrived: its replica publishes once the lock is released, other replicas hear it over
  // Redis) keeps its place in the new history, so that nothing is sent to it twice.
  private restart(feed: Feed, imported: ChangeRecord | null = null): void {
    const start: ChangeKey = { version: 0, step: 0 };
    feed.epoch++;
    if (feed.cursor !== null) feed.cursor = start;
    feed.last = null;
    feed.wanted = null;
    feed.again = true;
    for (const watch of feed.watches) {
      if (imported !== null && watch.imported !== null && sameChange(watch.imported, imported)) continue;
      watch.position = start;
      watch.imported = null;
    }
    void this.read(feed);
  }

  // A change the notification carries is delivered without a read when it certainly comes next
  // and no watch needs the plan content (which notifications do not carry).
  private takeCarried(feed: Feed, change: ChangeRecord): boolean {
    if (feed.reading || feed.last === null || !followsDirectly(feed.last, change)) return false;
    if ([...feed.watches].some((w) => w.subscriber.withContent)) return false;
    this.distribute(feed, { ...change, content: null });
    return true;
  }

  private distribute(feed: Feed, change: StoredChange): void {
    feed.cursor = { version: change.version, step: change.step };
    feed.last = lastChangeOf(change);
    for (const watch of feed.watches) if (watch.live) this.deliver(watch, change);
  }

  /** Ends every watch (draining for shutdown) and stops polling. */
  close(): void {
    this.closed = true;
    this.poller.stop();
    for (const feed of [...this.feeds.values()]) this.endAll(feed, { kind: "closing" });
  }

  // Reads the history from the watch's own position, one change at a time as its client takes
  // them, until the history is exhausted and the watch has reached the feed's cursor (everything up
  // to it is committed, so another read gets there); then the watch goes live, with no await between
  // that check and joining: the feed delivers whatever comes after its cursor. What the feed
  // delivered while the watch caught up lies at or before its cursor, so the watch read it itself.
  // A client slow to take a change (PAGE_HOLD_MS) has the rest of its page dropped meanwhile.
  private async catchUp(feed: Feed, watch: Watch): Promise<void> {
    // Until its client has taken a change, a content catch-up reads one at a time: a client that
    // never reads costs one plan read, not a page.
    let limit = watch.subscriber.withContent ? 1 : PAGE;
    try {
      for (;;) {
        const outcome = await this.catchUpPage(feed, watch, limit);
        if (outcome.kind === "read" && outcome.taken) limit = pageSize(watch.subscriber.withContent);
        if (outcome.kind === "ended") return;
        if (outcome.kind === "stalled") {
          await outcome.drained;
          if (watch.ended) return;
          limit = pageSize(watch.subscriber.withContent);
          continue;
        }
        // The feed's cursor as of now (another watch may have set it from a later read than this one).
        const { cursor } = feed;
        const reachedFeed = cursor === null || compareChangeKeys(watch.position, cursor) >= 0;
        if (!outcome.full && reachedFeed) break;
      }
    } catch (error) {
      this.end(feed, watch, { kind: "read-failed", error });
      return;
    }
    watch.live = true;
    if (feed.cursor === null) {
      feed.cursor = watch.position;
      void this.read(feed);
    }
  }

  // One page of a catch-up, kept only while this function runs: a stalled client's page is let go.
  private async catchUpPage(feed: Feed, watch: Watch, limit: number): Promise<PageOutcome> {
    const pending = watch.subscriber.drained();
    if (pending && !(await settlesWithin(pending, PAGE_HOLD_MS)))
      return { kind: "stalled", drained: pending };
    if (watch.ended) return { kind: "ended" };
    const room = watch.subscriber.room ? watch.subscriber.room() : NO_ROOM_KEPT;
    if (room === null) {
      this.end(feed, watch, { kind: "no-room" });
      return { kind: "ended" };
    }
    try {
      return await this.deliverPage(feed, watch, limit, pending !== null);
    } finally {
      room.release();
    }
  }

  // Reads one page of the watch's history and delivers it at its client's pace. With content, its
  // read and each change it delivers (which the stream then encodes: up to 1.8 MiB of Connect JSON
  // for the largest plan) wait for a turn of the event loop of their own (loopTurns, shared with
  // diffs and merges), so that hundreds of streams catching up at once take one such step per turn
  // and a bystander's call is served between any two of them.
  private async deliverPage(feed: Feed, watch: Watch, limit: number, taken: boolean): Promise<PageOutcome> {
    const { withContent } = watch.subscriber;
    if (withContent) await loopTurns.turn();
    if (watch.ended) return { kind: "ended" };
    const page = await this.source.readChanges(feed.taskId, watch.position, limit, withContent);
    for (const change of page) {
      const drained = watch.subscriber.drained();
      if (drained && !(await settlesWithin(drained, PAGE_HOLD_MS))) return { kind: "stalled", drained };
      taken ||= drained !== null;
      if (withContent) await loopTurns.turn();
      if (watch.ended) return { kind: "ended" };
      this.deliver(watch, change);
    }
    if (watch.ended) return { kind: "ended" };
    return { kind: "read", full: page.length === limit, taken: taken || watch.subscriber.drained() === null };
  }

  // One read loop per feed at a time; notifications arriving meanwhile only raise `wanted` or
  // `again`, which the loop checks before it stops (no await between that check and its end).
  private async read(feed: Feed): Promise<void> {
    if (feed.reading || feed.cursor === null) return;
    feed.reading = true;
    try {
      while (feed.watches.size > 0 && this.behind(feed)) {
        feed.again = false;
        const checkExists = feed.checkExists;
        feed.checkExists = false;
        const withContent = [...feed.watches].some((w) => w.subscriber.withContent);
        const limit = pageSize(withContent);
        const { epoch } = feed;
        const page = await this.source.readChanges(feed.taskId, feed.cursor, limit, withContent);
        if (epoch !== feed.epoch) continue; // an import restarted the feed meanwhile: read again
        for (const change of page) this.distribute(feed, change);
        if (page.length === limit) feed.again = true;
        if (checkExists && page.length === 0) {
          const states = await this.source.watchedTaskStates([feed.taskId]);
          if (!states.has(feed.taskId)) this.endAll(feed, { kind: "task-deleted" });
        }
        // A notified key the history does not hold (yet) is not waited for: the poll covers it.
        if (page.length === 0) feed.wanted = null;
      }
    } catch (error) {
      this.logger.warn({ taskId: feed.taskId, err: error }, "reading plan changes failed");
      this.endAll(feed, { kind: "read-failed", error });
    } finally {
      feed.reading = false;
    }
  }

  private behind(feed: Feed): boolean {
    if (feed.again) return true;
    return feed.wanted !== null && feed.cursor !== null && compareChangeKeys(feed.wanted, feed.cursor) > 0;
  }

  // The safety net for lost notifications: one query for every watched task.
  private async poll(): Promise<void> {
    const feeds = [...this.feeds.values()].filter((feed) => feed.cursor !== null);
    if (feeds.length === 0) return;
    try {
      const states = await this.source.watchedTaskStates(feeds.map((feed) => feed.taskId));
      for (const feed of feeds) {
        if (!states.has(feed.taskId)) this.endAll(feed, { kind: "task-deleted" });
        const newest = states.get(feed.taskId);
        // A history that ends before the cursor's version was replaced by an import whose notification
        // was lost (by version: a resume point after version N is (N, 1), past a newest change (N, 0)).
        if (newest && feed.cursor && newest.version < feed.cursor.version) this.restart(feed);
        else if (newest && feed.cursor && compareChangeKeys(newest, feed.cursor) > 0) {
          if (feed.wanted === null || compareChangeKeys(newest, feed.wanted) > 0) feed.wanted = newest;
          void this.read(feed);
        }
      }
    } catch (error) {
      this.logger.warn({ err: error }, "polling watched plans failed");
    }
  }

  private deliver(watch: Watch, change: StoredChange): void {
    if (watch.ended || compareChangeKeys(change, watch.position) <= 0) return;
    watch.position = { version: change.version, step: change.step };
    if (change.kind === "imported") watch.imported = change;
    watch.subscriber.deliver(change);
  }

  private endAll(feed: Feed, reason: SubscriptionEnd): void {
    for (const watch of [...feed.watches]) this.end(feed, watch, reason);
  }

  private end(feed: Feed, watch: Watch, reason: SubscriptionEnd): void {
    if (watch.ended) return;
    this.remove(feed, watch);
    watch.subscriber.end(reason);
  }

  private remove(feed: Feed, watch: Watch): void {
    watch.ended = true;
    feed.watches.delete(watch);
    if (feed.watches.size === 0 && this.feeds.get(feed.taskId) === feed) this.feeds.delete(feed.taskId);
  }
}

/** Nothing kept, nothing to let go: a subscriber without room to keep, or a message without content. */
export const NO_ROOM_KEPT: KeptRoom = { release: () => {} };

// Whether two records are the same committed change (one read back, the other carried by its
// notification): an import's key alone may repeat, as two imports may bring the same version.
function sameChange(a: ChangeRecord, b: ChangeRecord): boolean {
  return (
    compareChangeKeys(a, b) === 0 &&
    a.kind === b.kind &&
    a.committedAt.getTime() === b.committedAt.getTime() &&
    a.author.name === b.author.name
  );
}

// Whether `promise` settles within `ms` (it is not cancelled either way).
async function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}
