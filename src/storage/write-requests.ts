import type { WriteRequestRecord } from "../plans/ports/records";
import type { Send } from "./hot-statement";

type WriteRequestRow = Record<"task_id" | "request_id" | "fingerprint" | "result", string> & {
  readonly created_at: number | string;
};

/**
 * The remembered write requests of a task (write_requests), read and written inside its write.
 * created_at holds epoch milliseconds (BIGINT), as WriteRequestEntity maps it.
 */
export class WriteRequests {
  constructor(private readonly send: Send) {}

  async find(taskId: string, requestId: string): Promise<WriteRequestRecord | null> {
    const { rows } = await this.send(
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
      result: row.result,
      createdAt: new Date(Number(row.created_at)),
    };
  }

  /** Remembers `request`, forgetting the task's requests made before `forgetBefore`. */
  async remember(request: WriteRequestRecord, forgetBefore: Date): Promise<void> {
    await this.send("DELETE FROM write_requests WHERE task_id = ? AND created_at < ?", [
      request.taskId,
      forgetBefore.getTime(),
    ]);
    await this.send(
      "INSERT INTO write_requests (task_id, request_id, fingerprint, result, created_at) VALUES (?, ?, ?, ?, ?)",
      [request.taskId, request.requestId, request.fingerprint, request.result, request.createdAt.getTime()],
    );
  }
}
