import { mkdtempSync, rmSync } from "node:fs";
import { connect as connectSocket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Replica, startReplica } from "../../harness/servers/replica";
import { type Clients, connect } from "../../harness/calls/rpc";
import { openStalledHttpWatches } from "../../harness/calls/stalled-http-watches";
import { randomId } from "../../harness/servers/test-app";

// The HTTP door's limits (docs/http.md "Limits") against a replica process (dist/src/bin/main.js) and
// raw node:net sockets, as a slow or greedy client would use them: a request body that trickles or
// stalls is answered 408 and its connection closed after PLAN_HTTP_BODY_TIMEOUT_MS (node:http's
// default let it hold its connection for 300 s), and a connection past PLAN_HTTP_MAX_CONNECTIONS is
// closed on accept while the connections being served keep theirs. WATCH_MEMORY_MAIN names another
// build's main.js to compare (before the limits, the slow sockets stay open).
const MAIN = process.env.WATCH_MEMORY_MAIN || undefined;
const BODY_TIMEOUT_MS = 1_500;
const MAX_CONNECTIONS = 20;

/** What a raw socket saw: the bytes the server answered, how long until it closed, and how. */
interface SocketEnd {
  readonly response: string;
  readonly closedAfterMs: number;
  readonly error: string | null;
}

/**
 * Sends `head` then, every `everyMs` (0: never), one more byte of the body it announced; resolves when
 * the server closes the connection, or after `giveUpMs` (then closedAfterMs is Infinity).
 */
function slowRequest(port: number, head: string, body: string, everyMs: number, giveUpMs: number) {
  return new Promise<SocketEnd>((resolve) => {
    const start = Date.now();
    const chunks: Buffer[] = [];
    let error: string | null = null;
    let sent = 0;
    let ticker: NodeJS.Timeout | undefined;
    const socket = connectSocket(port, "127.0.0.1", () => {
      socket.write(head);
      if (everyMs > 0) {
        ticker = setInterval(() => {
          if (sent < body.length - 1 && !socket.destroyed) socket.write(body[sent++] as string);
        }, everyMs);
      }
    });
    const giveUp = setTimeout(() => finish(Infinity), giveUpMs);
    const finish = (closedAfterMs: number) => {
      clearInterval(ticker);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ response: Buffer.concat(chunks).toString("latin1"), closedAfterMs, error });
    };
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    socket.once("close", () => finish(Date.now() - start));
  });
}

const writeHead = (port: number, body: string) =>
  `POST /taskplans.v1.PlanService/SavePlan HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
  `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;

describe("the HTTP door's limits against slow and greedy clients", () => {
  let replica: Replica;
  let client: Clients;
  let dir: string;
  const taskId = randomId("task");

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "http-slow-bodies-"));
    replica = await startReplica(
      {
        PLAN_DATABASE_URL: `sqlite:${join(dir, "plans.sqlite")}`,
        PLAN_HTTP_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
        PLAN_HTTP_HEADERS_TIMEOUT_MS: "1000",
        PLAN_HTTP_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
      },
      dir,
      null,
      MAIN ? { main: MAIN } : {},
    );
    client = connect(replica.port);
    await client.tasks.createTask({ taskId, workspaceId: "ws-1", title: "a task" });
    await client.plans.createPlan({ taskId, content: "# Plan\n" });
  }, 60_000);
  afterAll(async () => {
    client.close();
    await replica.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const stored = async () => {
    const plan = (await client.plans.getPlan({ taskId })).plan;
    const revisions = (await client.plans.listPlanRevisions({ taskId })).revisions.length;
    return { content: plan?.content, version: plan?.version, revisions };
  };

  it("a body that trickles or stalls is answered 408 and closed after the body timeout; nothing is written", async () => {
    const before = await stored();
    const body = JSON.stringify({ taskId, content: `# Slow plan\n${"x".repeat(500)}` });
    const head = writeHead(replica.httpPort, body);
    // Well past the setting, well short of node:http's old 300 s: no tight timing on a shared machine.
    const giveUpMs = 10 * BODY_TIMEOUT_MS;
    const [trickled, stalled] = await Promise.all([
      slowRequest(replica.httpPort, head, body, 100, giveUpMs),
      slowRequest(replica.httpPort, head, body, 0, giveUpMs),
    ]);
    for (const end of [trickled, stalled]) {
      expect(end.closedAfterMs).toBeLessThan(giveUpMs);
      expect(end.closedAfterMs).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 100);
      expect(end.response).toMatch(/^HTTP\/1\.1 408 /);
    }
    expect(await stored()).toEqual(before);
  }, 30_000);

  it("past the connection cap a new connection is closed unanswered; once the held ones close a client is served", async () => {
    const before = await stored();
    // WatchPlan streams hold their connections (a response being written is not timed out).
    const held = await openStalledHttpWatches(replica.httpPort, MAX_CONNECTIONS, {
      taskId,
      includeContent: false,
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(held.closed()).toBe(0);
      const body = JSON.stringify({ taskId, content: "# Over the cap\n" });
      const over = await slowRequest(
        replica.httpPort,
        writeHead(replica.httpPort, body) + body,
        "",
        0,
        10_000,
      );
      // node:http closes it as soon as it is accepted: no byte of an answer, whether the client then
      // sees a plain close or a reset (ECONNRESET, if its request was already in the kernel).
      expect(over.closedAfterMs).toBeLessThan(10_000);
      expect(over.response).toBe("");
      expect(held.closed()).toBe(0);
      process.stdout.write(
        `over the cap: closed after ${over.closedAfterMs} ms, error ${over.error ?? "none (FIN)"}\n`,
      );
    } finally {
      await held.close();
    }
    // The server notices the closed streams at once or nearly: a normal client is served again.
    let status = 0;
    for (let attempt = 0; attempt < 20 && status !== 200; attempt++) {
      try {
        const res = await fetch(`http://127.0.0.1:${replica.httpPort}/taskplans.v1.PlanService/GetPlan`, {
          method: "POST",
          headers: { "content-type": "application/json", connection: "close" },
          body: JSON.stringify({ taskId }),
        });
        status = res.status;
        await res.arrayBuffer();
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
    expect(status).toBe(200);
    expect(await stored()).toEqual(before);
  }, 30_000);
});
