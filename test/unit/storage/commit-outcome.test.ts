import {
  CommitOutcomeUnknownError,
  StorageConflictError,
  StorageUnavailableError,
} from "../../../src/plans/ports/store-errors";
import { classifyCommitFailure, classifyStorageError } from "../../../src/storage/storage-errors";
import { BatchedStatements } from "../../../src/storage/transaction";
import type { Mysql2Connection } from "../../../src/storage/write-connection";

// Errors as mysql2 raises them.
const fatal = (code: string, message = code) => Object.assign(new Error(message), { code, fatal: true });
const packet = (errno: number, code: string) => Object.assign(new Error(code), { errno, code });
const lost = () => fatal("PROTOCOL_CONNECTION_LOST", "Connection lost: The server closed the connection.");
const reset = () => Object.assign(fatal("ECONNRESET", "read ECONNRESET"), { errno: -104 });
const closedState = () => fatal("", "Can't add new command when connection is in closed state");

describe("classifyCommitFailure: a failed round trip that carried a COMMIT", () => {
  it.each([
    ["the connection lost", lost()],
    ["a reset", reset()],
    ["a timeout", fatal("ETIMEDOUT")],
    ["a fatal error of no known code", fatal("PROTOCOL_PACKETS_OUT_OF_ORDER")],
    ["the session killed (MariaDB 1927)", packet(1927, "ER_CONNECTION_KILLED")],
    ["the server shutting down (1053)", packet(1053, "ER_SERVER_SHUTDOWN")],
    ["the server gone (2013)", packet(2013, "CR_SERVER_LOST")],
  ])("%s: the outcome is unknown (the COMMIT may have run)", (_name, error) => {
    const classified = classifyCommitFailure(error);
    expect(classified).toBeInstanceOf(CommitOutcomeUnknownError);
    expect((classified as Error).cause).toBe(error);
    // Classifying it again (the store's guard does) keeps it.
    expect(classifyStorageError(classified)).toBe(classified);
  });

  it("a connection found closed before the query was sent: nothing written (STORAGE_UNAVAILABLE)", () => {
    expect(classifyCommitFailure(closedState())).toBeInstanceOf(StorageUnavailableError);
  });

  it.each([
    ["a deadlock", packet(1213, "ER_LOCK_DEADLOCK")],
    ["a lock wait timeout", packet(1205, "ER_LOCK_WAIT_TIMEOUT")],
    ["a duplicate key", packet(1062, "ER_DUP_ENTRY")],
  ])("%s stopped the query before its COMMIT: a conflict, as before", (_name, error) => {
    expect(classifyCommitFailure(error)).toBeInstanceOf(StorageConflictError);
  });

  it("any other refusal by the server stopped the query before its COMMIT: unchanged (INTERNAL)", () => {
    const error = packet(1406, "ER_DATA_TOO_LONG");
    expect(classifyCommitFailure(error)).toBe(error);
  });
});

// A mysql2 connection that answers each query from a script and records what it was sent.
function scripted(...answers: ((sql: string) => [Error | null, unknown])[]) {
  const sent: string[] = [];
  const connection: Mysql2Connection = {
    query(sql, _values, callback) {
      sent.push(sql);
      const answer = answers.shift();
      if (!answer) throw new Error(`unscripted query: ${sql}`);
      const [error, result] = answer(sql);
      setImmediate(() => callback(error, result));
    },
  };
  return { connection, sent };
}
const ok = (): [null, unknown] => [null, [{ affectedRows: 1 }, { affectedRows: 0 }, { affectedRows: 0 }]];

describe("BatchedStatements.commit", () => {
  it("a connection lost while the rows and the COMMIT were out: CommitOutcomeUnknownError", async () => {
    const { connection, sent } = scripted(() => [lost(), undefined]);
    const statements = new BatchedStatements(connection, "SET SESSION x = 1");
    statements.defer("UPDATE task_plans SET version = 2", []);
    await expect(statements.commit()).rejects.toBeInstanceOf(CommitOutcomeUnknownError);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(/UPDATE task_plans[\s\S]*COMMIT/);
  });

  it("a COMMIT sent alone, then lost: unknown too", async () => {
    const { connection } = scripted(() => [reset(), undefined]);
    await expect(new BatchedStatements(connection).commit()).rejects.toBeInstanceOf(
      CommitOutcomeUnknownError,
    );
  });

  it("a statement before the COMMIT refused (deadlock): a conflict, nothing committed", async () => {
    const { connection } = scripted(() => [packet(1213, "ER_LOCK_DEADLOCK"), undefined]);
    const statements = new BatchedStatements(connection, "SET SESSION x = 1");
    statements.defer("UPDATE task_plans SET version = 2", []);
    await expect(statements.commit()).rejects.toBeInstanceOf(StorageConflictError);
  });

  it("a lost fence stops the query before the COMMIT: its refusal is definite, even if its check then loses the connection", async () => {
    const { connection } = scripted(
      () => [packet(1242, "ER_SUBQUERY_NO_1_ROW"), undefined],
      () => [lost(), undefined],
    );
    const statements = new BatchedStatements(connection, "SET SESSION x = 1");
    statements.defer("UPDATE task_plans SET version = 2 WHERE version = 1", [], {
      lost: "the version moved",
      check: async (send) => {
        await send("SELECT 1", []);
      },
    });
    const failure = await statements.commit().catch((error: unknown) => error);
    expect(failure).not.toBeInstanceOf(CommitOutcomeUnknownError);
    expect((failure as { code?: string }).code).toBe("PROTOCOL_CONNECTION_LOST");
  });

  it("a lost statement before the commit (the work's own send) is left to the store: unavailable, nothing written", async () => {
    const { connection } = scripted(ok, () => [lost(), undefined]);
    const statements = new BatchedStatements(connection, "SET SESSION x = 1");
    statements.defer("START TRANSACTION", []);
    await statements.send("SELECT 1 FOR UPDATE", []);
    const failure = await statements.send("SELECT 2", []).catch((error: unknown) => error);
    expect(classifyStorageError(failure)).toBeInstanceOf(StorageUnavailableError);
  });
});
