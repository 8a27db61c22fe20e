import {
  type ConnectionSource,
  type PooledConnection,
  WriteConnection,
} from "../../../src/storage/write-connection";

// Fake pooled connections: each answers its statements from a script (an error, or rows).
function fakeConnection(name: string, answers: (Error | null)[], closed = false) {
  const sent: string[] = [];
  const state = { released: false, destroyed: false };
  const connection: PooledConnection = {
    stream: { destroyed: closed },
    query(sql, _values, callback) {
      sent.push(sql);
      const error = answers.shift() ?? null;
      setImmediate(() => callback(error, error ? undefined : [{ from: name }]));
    },
    release: () => void (state.released = true),
    destroy: () => void (state.destroyed = true),
  };
  return { connection, sent, state };
}

const lost = () =>
  Object.assign(new Error("Connection lost: The server closed the connection."), { fatal: true });

function sourceOf(...connections: PooledConnection[]) {
  const prepared: PooledConnection[] = [];
  const source: ConnectionSource = {
    take: () => Promise.resolve(connections.shift() as PooledConnection),
    prepare: (c) => Promise.resolve(void prepared.push(c)),
  };
  return { source, prepared };
}

const send = (connection: WriteConnection, sql: string) =>
  new Promise<unknown>((resolve, reject) =>
    connection.query(sql, [], (error, result) => (error ? reject(error) : resolve(result))),
  );

describe("the connection a write holds", () => {
  it("replaces a connection found closed before the write sends anything, and prepares the new one", async () => {
    const [closed, open] = [fakeConnection("closed", [], true), fakeConnection("open", [])];
    const { source, prepared } = sourceOf(closed.connection, open.connection);
    const reasons: string[] = [];
    const connection = await WriteConnection.take(source, (reason) => reasons.push(reason));
    expect(await send(connection, "SELECT 1")).toEqual([{ from: "open" }]);
    expect(closed.state.destroyed).toBe(true);
    expect(prepared).toEqual([open.connection]);
    expect(reasons).toEqual(["closed"]);
  });

  it("sends the first statement again on a new connection when it finds the first gone, once, while it may", async () => {
    const [gone, next] = [fakeConnection("gone", [lost()]), fakeConnection("next", [])];
    const { source } = sourceOf(gone.connection, next.connection);
    const reasons: string[] = [];
    const connection = await WriteConnection.take(source, (reason) => reasons.push(reason));
    connection.resendFirstWhile(() => true);
    expect(await send(connection, "START TRANSACTION; SELECT 1 FOR UPDATE")).toEqual([{ from: "next" }]);
    expect([gone.sent, next.sent]).toEqual([
      ["START TRANSACTION; SELECT 1 FOR UPDATE"],
      ["START TRANSACTION; SELECT 1 FOR UPDATE"],
    ]);
    expect(gone.state.destroyed).toBe(true);
    expect(reasons).toEqual(["lost"]);
  });

  it("never sends a statement again that may have committed, a later statement, or after an error of the statement's own", async () => {
    const cases = [
      { answers: [lost()], resendable: false, first: true }, // the COMMIT's round trip
      { answers: [null, lost()], resendable: true, first: false }, // a later statement
      { answers: [new Error("Duplicate entry")], resendable: true, first: true }, // not a lost connection
    ];
    for (const { answers, resendable, first } of cases) {
      const [only, spare] = [fakeConnection("only", answers), fakeConnection("spare", [])];
      const { source } = sourceOf(only.connection, spare.connection);
      const connection = await WriteConnection.take(source, () => undefined);
      connection.resendFirstWhile(() => resendable);
      if (!first) await send(connection, "SELECT 1");
      await expect(send(connection, "COMMIT")).rejects.toThrow();
      expect(spare.sent).toEqual([]);
    }
  });

  it("closes a connection it cannot prepare, instead of giving it back half set up", async () => {
    const broken = fakeConnection("broken", []);
    const source: ConnectionSource = {
      take: () => Promise.resolve(broken.connection),
      prepare: () => Promise.reject(new Error("SET SESSION failed")),
    };
    await expect(WriteConnection.take(source, () => undefined)).rejects.toThrow("SET SESSION failed");
    expect(broken.state).toEqual({ released: false, destroyed: true });
  });
});
