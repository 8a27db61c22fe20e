/**
 * The raw baseline of `npm run bench:overhead`, run as its own process so that its CPU is measured
 * alone: the very statements the service sends for one append (bench/overhead.ts checks that against
 * MariaDB's general log), sent with mysql2, under a Redlock on the same Redis nodes when given; no
 * gRPC, no TypeORM, no service code. Prints one JSON line: latencies, elapsed time and CPU.
 *
 *   node dist-bench/bench/overhead/overhead-raw.js '{"databaseUrl":"mysql://...","redisUrls":[...],"tasks":[...],"appends":3000,"inFlight":16}'
 */
import { Redlock } from "@sesamecare-oss/redlock";
import Redis from "ioredis";
import { createPool, type PoolConnection, type RowDataPacket } from "mysql2/promise";
import {
  DEFAULT_WRITE_CONNECTIONS,
  FENCE_CHECK,
  RESTORE_SESSION_BOUNDS,
  sessionBounds,
} from "../../src/storage/transaction";

export interface RawJob {
  readonly databaseUrl: string;
  readonly redisUrls: readonly string[];
  readonly tasks: readonly string[];
  readonly appends: number;
  /** Appends before the measured ones (JIT warm-up, as the servers get), not in the result. */
  readonly warmupAppends?: number;
  readonly inFlight: number;
  readonly fragmentBytes: number;
}

export interface RawResult {
  readonly latenciesMs: number[];
  readonly elapsedMs: number;
  readonly cpuMs: number;
}

// The statements of one service append (text protocol, values escaped by the client). Neither the
// history usage query nor the task read before the lock is among them: the service skips the first
// for tasks far from their budget and the second for tasks it has written before, as these are.
export const SQL = {
  lockState:
    "SELECT t.id AS t_id, t.workspace_id AS t_workspace_id, t.title AS t_title, t.created_at AS t_created_at, p.task_id AS p_task_id, p.title AS p_title, p.content_bytes AS p_content_bytes, p.content_chars AS p_content_chars, p.content_trimmed_chars AS p_content_trimmed_chars, p.content_trimmed_bytes AS p_content_trimmed_bytes, p.version AS p_version, p.created_by AS p_created_by, p.created_at AS p_created_at, p.updated_at AS p_updated_at, p.latest_revision_number AS p_latest_revision_number, p.deleted AS p_deleted, p.implementation_started_at AS p_implementation_started_at, p.implementation_started_by AS p_implementation_started_by, p.implementation_started_session_id AS p_implementation_started_session_id, p.history_revisions AS p_history_revisions, p.history_bytes AS p_history_bytes, p.history_version AS p_history_version, NULL AS p_content, r.id AS r_id, r.task_id AS r_task_id, r.revision_number AS r_revision_number, r.title AS r_title, r.content_bytes AS r_content_bytes, r.content_chars AS r_content_chars, r.author_kind AS r_author_kind, r.author_name AS r_author_name, r.revert_of_revision_id AS r_revert_of_revision_id, r.created_at AS r_created_at, r.updated_at AS r_updated_at, r.row_version AS r_row_version, r.merged_from_version AS r_merged_from_version, r.merged_to_version AS r_merged_to_version, NULL AS r_content FROM tasks t LEFT JOIN task_plans p ON p.task_id = t.id LEFT JOIN task_plan_revisions r ON r.task_id = t.id AND r.revision_number = p.latest_revision_number WHERE t.id = ? FOR UPDATE",
  updateHead:
    "UPDATE task_plans SET title = ?, content_bytes = ?, content_chars = ?, content_trimmed_chars = ?, content_trimmed_bytes = ?, version = ?, created_by = ?, created_at = ?, updated_at = ?, latest_revision_number = ?, deleted = ?, implementation_started_at = ?, implementation_started_by = ?, implementation_started_session_id = ?, history_revisions = ?, history_bytes = ?, history_version = ?, content = CONCAT(LEFT(content, ?), ?) WHERE task_id = ? AND version = ? AND OCTET_LENGTH(content) = content_bytes",
  updateRevision:
    "UPDATE task_plan_revisions SET title = ?, content_bytes = ?, content_chars = ?, updated_at = ?, row_version = ?, content_at_head = ?, content = '' WHERE id = ? AND task_id = ? AND row_version = ?",
  recordChange:
    "INSERT INTO task_plan_changes (task_id, version, step, kind, committed_at, plan, revision_id, revision_number, revision_coalesced, author_kind, author_name, content, content_kept_chars, content_tail, stored_bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)",
};

type Row = RowDataPacket & Record<string, string | number | null>;

/** What an append wrote: the plan's metadata after it and the revision it coalesced into. */
export interface RawAppended {
  readonly plan: Record<string, string | number | boolean | null>;
  readonly revision: { readonly id: string; readonly number: number; readonly coalesced: boolean };
}

/**
 * One append, statement for statement what the service does when it coalesces into the newest
 * revision, in the same two queries: the session's bounds and START TRANSACTION with the locking
 * read, then the rows (each fenced one followed by the service's check, which stops the query before
 * COMMIT) with the COMMIT and the bounds restored.
 */
async function append(connection: PoolConnection, taskId: string, fragment: string): Promise<RawAppended> {
  try {
    const [opened] = await connection.query<Row[][]>(
      `${sessionBounds(DEFAULT_WRITE_CONNECTIONS.holdSeconds)};\nSTART TRANSACTION;\n${SQL.lockState}`,
      [taskId],
    );
    const s = opened[2]?.[0];
    if (!s || s.p_version === null) throw new Error(`task ${taskId} has no plan`);
    // The database composes: keep the stored content without its trailing whitespace, add the
    // separator and the fragment (the bench's fragments have no leading blank lines, no trailing space).
    const keepChars = Number(s.p_content_trimmed_chars);
    const suffix = `\n\n${fragment}`;
    const bytes = Number(s.p_content_trimmed_bytes) + Buffer.byteLength(suffix);
    const chars = keepChars + suffix.length;
    const now = Date.now();
    const version = Number(s.p_version);
    // The history usage kept with HEAD, as the service keeps it: the coalesced revision now holds
    // the new size, and the change row adds its tail (none: the fragments have no trailing space).
    const historyBytes = Number(s.p_history_bytes) + bytes - Number(s.r_content_bytes);
    // prettier-ignore
    const head = [
      s.p_title, bytes, chars, chars, bytes, version + 1, s.p_created_by, s.p_created_at, now,
      s.p_latest_revision_number, 0, null, null, null, s.p_history_revisions, historyBytes, version + 1, keepChars,
      suffix, taskId, version,
    ];
    const rowVersion = Number(s.r_row_version);
    const revision = [s.r_title, bytes, chars, now, rowVersion + 1, 1, s.r_id, taskId, rowVersion];
    // The change WatchPlan streams, with the plan's metadata as the service serializes it; an append's
    // content is held as a prefix of the next version's (the fragment has no trailing whitespace).
    const plan = {
      taskId,
      title: s.p_title,
      contentBytes: bytes,
      contentChars: chars,
      version: version + 1,
      createdBy: s.p_created_by,
      createdAt: Number(s.p_created_at),
      updatedAt: now,
      latestRevisionNumber: Number(s.p_latest_revision_number),
      deleted: false,
      implementationStartedAt: null,
      implementationStartedBy: null,
      implementationStartedSessionId: null,
    };
    // prettier-ignore
    const change = [
      taskId, version + 1, 0, "updated", now, JSON.stringify(plan), s.r_id, s.r_revision_number, 1, s.r_author_kind,
      s.r_author_name, chars, "", 0,
    ];
    // A lost fence (or a stored size mismatch) raises an error there, and the COMMIT is not reached.
    await connection.query(
      [
        SQL.updateHead,
        FENCE_CHECK,
        SQL.updateRevision,
        FENCE_CHECK,
        SQL.recordChange,
        "COMMIT",
        RESTORE_SESSION_BOUNDS,
      ].join(";\n"),
      [...head, ...revision, ...change],
    );
    return { plan, revision: { id: String(s.r_id), number: Number(s.r_revision_number), coalesced: true } };
  } catch (error) {
    await connection.query(`ROLLBACK;\n${RESTORE_SESSION_BOUNDS}`);
    throw error;
  }
}

/** A connection pool and, with Redis nodes, a Redlock on them: what one raw append needs. */
export function openRaw(job: Pick<RawJob, "databaseUrl" | "redisUrls">) {
  const pool = createPool({ uri: job.databaseUrl, connectionLimit: 10, multipleStatements: true });
  const clients = job.redisUrls.map((url) => new Redis(url, { maxRetriesPerRequest: 3 }));
  const redlock = clients.length
    ? new Redlock(clients, { retryCount: 200, retryDelay: 10, retryJitter: 10 })
    : null;
  return {
    /** As the service: lock -> transaction -> release (it knows the task's workspace from earlier
     * writes, so its reach check before the lock sends nothing). */
    async append(taskId: string, fragment: string): Promise<RawAppended> {
      const connection = await pool.getConnection();
      const lock = redlock ? await redlock.acquire([`taskplans:lock:{${taskId}}`], 5000) : null;
      try {
        return await append(connection, taskId, fragment);
      } finally {
        connection.release();
        if (lock) await lock.release();
      }
    },
    async close(): Promise<void> {
      await pool.end();
      for (const client of clients) client.disconnect();
    },
  };
}

export async function runRaw(job: RawJob): Promise<RawResult> {
  const raw = openRaw(job);
  // `count` appends at job.inFlight, round robin over the tasks; the latency of each.
  const load = async (count: number): Promise<number[]> => {
    const latenciesMs: number[] = [];
    let next = 0;
    const worker = async () => {
      while (next < count) {
        const i = next++;
        const taskId = job.tasks[i % job.tasks.length] ?? "";
        const t0 = performance.now();
        await raw.append(taskId, `- append ${i} `.padEnd(job.fragmentBytes, "x"));
        latenciesMs.push(performance.now() - t0);
      }
    };
    await Promise.all(Array.from({ length: job.inFlight }, worker));
    return latenciesMs;
  };
  await load(job.warmupAppends ?? 0);
  const cpu = process.cpuUsage();
  const started = performance.now();
  const latenciesMs = await load(job.appends);
  const elapsedMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  await raw.close();
  return { latenciesMs, elapsedMs, cpuMs: (used.user + used.system) / 1000 };
}

if (require.main === module) {
  runRaw(JSON.parse(process.argv[2] ?? "{}") as RawJob)
    .then((result) => process.stdout.write(`${JSON.stringify(result)}\n`))
    .catch((error: unknown) => {
      process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
      process.exit(1);
    });
}
