import { Column, Entity, PrimaryColumn } from "typeorm";
import type { WriteRequestRecord } from "../../plans/ports/records";
import type { WriteStatements } from "../transaction";
import type { Send } from "../write-connection";

type WriteRequestRow = Record<"task_id" | "request_id" | "fingerprint" | "result", string> & {
  readonly created_at: number | string;
};

/** Serializes a write result for replay; Date values are tagged so that only they come back as Dates. */
export function encodeReplay(result: unknown): string {
  return JSON.stringify(result, function (this: Record<string, unknown>, key, value: unknown) {
    const raw = this[key];
    return raw instanceof Date ? { $date: raw.toISOString() } : value;
  });
}

/** Parses a stored write result. */
export function decodeReplay(text: string): unknown {
  return JSON.parse(text, (_key, value: unknown) =>
    typeof value === "object" && value !== null && "$date" in value
      ? new Date(String((value as { $date: unknown }).$date))
      : value,
  );
}

/**
 * The remembered write requests of a task (`write_requests`), read and written inside its write.
 * created_at holds epoch milliseconds (BIGINT), as WriteRequestEntity maps it; result holds the
 * write's answer as encodeReplay writes it.
 */
export async function findRequest(
  send: Send,
  taskId: string,
  requestId: string,
): Promise<WriteRequestRecord | null> {
  const { rows } = await send(
    "SELECT task_id, request_id, fingerprint, result, created_at FROM write_requests" +
      " WHERE task_id = ? AND request_id = ? LIMIT 1",
    [taskId, requestId],
  );
  const row = rows[0] as WriteRequestRow | undefined;
  if (!row) return null;
  return {
    taskId: row.task_id,
    requestId: row.request_id,
    fingerprint: row.fingerprint,
    result: decodeReplay(row.result),
    createdAt: new Date(Number(row.created_at)),
  };
}

/** Remembers `request`, forgetting the task's requests made before `forgetBefore` (deferred). */
export function rememberRequest(
  statements: WriteStatements,
  request: WriteRequestRecord,
  forgetBefore: Date,
): void {
  statements.defer("DELETE FROM write_requests WHERE task_id = ? AND created_at < ?", [
    request.taskId,
    forgetBefore.getTime(),
  ]);
  statements.defer(
    "INSERT INTO write_requests (task_id, request_id, fingerprint, result, created_at) VALUES (?, ?, ?, ?, ?)",
    [
      request.taskId,
      request.requestId,
      request.fingerprint,
      encodeReplay(request.result),
      request.createdAt.getTime(),
    ],
  );
}

// The table as TypeORM declares it: the schema the migrations must leave
// (test/integration/storage/migration-replay.test.ts compares them). Never used to read or write
// rows: the codec above does.
/** Row of `write_requests`: an agent write's request id, payload fingerprint and result. */
@Entity({ name: "write_requests" })
export class WriteRequestEntity {
  @PrimaryColumn({ name: "task_id", type: "varchar", length: 128 })
  taskId: string;

  @PrimaryColumn({ name: "request_id", type: "varchar", length: 128 })
  requestId: string;

  @Column({ type: "varchar", length: 64 })
  fingerprint: string;

  @Column({ type: "text" })
  result: string;

  @Column({ name: "created_at", type: "bigint" })
  createdAt: number;
}
