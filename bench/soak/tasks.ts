import { createHash } from "node:crypto";
import type { WritePlanResponse } from "@taskplans/client";
import type { Findings } from "./findings";

/**
 * ledger: only appends, one at a time; the final plan must be exactly the acknowledged fragments
 * composed in order. mixed: every kind of write, one at a time; the final plan must be the content of
 * the last acknowledged write. contended: concurrent appends from several writers (and replicas);
 * every acknowledged fragment must be in the final plan exactly once, each writer's in its order.
 */
export type TaskKind = "ledger" | "mixed" | "contended";

/** The append rule (REQ-002) for the soak's texts, whose only whitespace is " " and "\n". */
export function composeAppend(stored: string, fragment: string): string {
  const head = stored.replace(/[ \n]+$/, "");
  const tail = fragment.replace(/^(?: *\n)+/, "");
  return head === "" ? tail : `${head}\n\n${tail}`;
}

export const utf8 = (text: string) => Buffer.byteLength(text, "utf8");
const hash = (text: string) => createHash("sha1").update(text).digest("base64");

/** The soak's client-side record of one task: what every acknowledged write says it must hold. */
export class SoakTask {
  /** Calls in flight on this task (writes and verified reads). */
  inFlight = 0;
  /** Takes no new writes; verified and deleted once nothing is in flight. */
  retired = false;
  /** Sole-writer kinds: content after the last acknowledged write (null: plan deleted). */
  content: string | null = null;
  /** Version after the last acknowledged write (contended: the highest acknowledged). */
  version = 0;
  implementationStarted = false;
  /** Ledger: acknowledged fragments in order. Contended: marker -> writer and sequence. */
  readonly fragments: string[] = [];
  readonly markers = new Map<string, { writer: number; seq: number }>();
  /** Contended: fragments sent whose outcome is unknown (may or may not be in the plan, at most once). */
  readonly unknown = new Set<string>();
  /** Contended: next sequence number per writer seat, and the seats with an append in flight. */
  readonly nextSeq = new Map<number, number>();
  readonly busySeats = new Set<number>();
  contentBytes = 0;
  maxBytes = 0;
  /** Bytes each revision holds (the content of the last write that landed in it). */
  readonly revisionBytes = new Map<number, number>();
  latestRevision = 0;
  /** Acknowledged writes that carried a request_id (each leaves a remembered-request row). */
  requestIds = 0;
  private requestSerial = 0;
  /** Acknowledged calls that may have written a change row (writes, and implementation marks). */
  writes = 0;
  /** Writes whose outcome is unknown (transport error, deadline). */
  uncertain = 0;
  /** Acknowledgement times (ms) of recent writes, oldest first, for the retention bounds. */
  readonly recentAcks: number[] = [];
  /** For a watched sole-writer task: the content hash each version must carry (set before the write). */
  watched = false;
  private readonly hashByVersion = new Map<number, string>();

  constructor(
    readonly id: string,
    readonly kind: TaskKind,
    /** How far back recentAcks reaches (longer than any retention bound looks). */
    private readonly keepAcksMs: number,
  ) {}

  /** A request_id never used before on this task (a reused one with other content is REQUEST_ID_REUSED). */
  nextRequestId(): string {
    return `${this.id}-q${this.requestSerial++}`;
  }

  get soleWriter(): boolean {
    return this.kind !== "contended";
  }

  /** Records an acknowledged content write; for a sole writer, checks the version and the size. */
  acknowledge(
    response: WritePlanResponse,
    expected: { content: string | null; versionStep?: number },
    findings: Findings,
    now: number,
  ): void {
    const plan = response.plan;
    const version = Number(plan?.version ?? 0);
    const bytes = Number(plan?.contentBytes ?? 0);
    if (this.soleWriter) {
      const step = expected.versionStep ?? 1;
      if (version !== this.version + step) {
        findings.add(
          "version-sequence",
          `${this.id}: acknowledged version ${version} after ${this.version} (expected +${step})`,
        );
      }
      if (expected.content !== null && bytes !== utf8(expected.content)) {
        findings.add(
          "ack-size",
          `${this.id} v${version}: acknowledged ${bytes} bytes, the soak's model has ${utf8(expected.content)}`,
        );
      }
      this.content = expected.content;
      this.version = version;
    } else {
      this.version = Math.max(this.version, version);
    }
    this.noteWrite(bytes, Number(response.revision?.number ?? 0), now);
  }

  /**
   * Before a sole-writer write: the content the next version will carry, for the watcher to compare
   * (a change may arrive before the acknowledgement).
   */
  expect(content: string): void {
    if (this.watched && this.soleWriter) this.hashByVersion.set(this.version + 1, hash(content));
  }

  /** A write that changed the version without a WritePlanResponse (DeletePlan). */
  acknowledgeDelete(now: number): void {
    this.content = null;
    this.version += 1;
    this.implementationStarted = false;
    this.noteWrite(0, 0, now); // revisions survive a plan delete
  }

  /** An implementation mark: no version change, but (the first time) a change row of its own. */
  acknowledgeMark(now: number): void {
    this.implementationStarted = true;
    this.noteWrite(this.contentBytes, 0, now);
  }

  /** Whether a watched change's content is the content the model held at that version. */
  contentMatches(version: number, content: string): boolean | null {
    const known = this.hashByVersion.get(version);
    return known === undefined ? null : known === hash(content);
  }

  /** Drops per-version records at or below `version` (the watcher has them). */
  forgetUpTo(version: number): void {
    for (const key of this.hashByVersion.keys()) if (key <= version) this.hashByVersion.delete(key);
  }

  /** Writes acknowledged at or after `since` (ms). */
  acksSince(since: number): number {
    let count = 0;
    for (let i = this.recentAcks.length - 1; i >= 0 && (this.recentAcks[i] ?? 0) >= since; i--) count++;
    return count;
  }

  private noteWrite(bytes: number, revision: number, now: number): void {
    this.writes++;
    this.contentBytes = bytes;
    this.maxBytes = Math.max(this.maxBytes, bytes);
    if (revision > 0) {
      this.revisionBytes.set(revision, bytes);
      this.latestRevision = Math.max(this.latestRevision, revision);
    }
    this.recentAcks.push(now);
    while ((this.recentAcks[0] ?? now) < now - this.keepAcksMs) this.recentAcks.shift();
  }
}
