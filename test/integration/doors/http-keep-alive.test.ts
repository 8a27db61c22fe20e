import { Agent, type IncomingMessage, request } from "node:http";
import type { Socket } from "node:net";
import { MAX_MESSAGE_BYTES } from "../../../src/grpc/server";
import { DRAIN_MAX_MS, LINGER_MS } from "../../../src/http/unread-body";
import { startTestApp, type TestApp } from "../../harness/servers/test-app";

// A connection of the HTTP door after an answer that came before its request's body ended (a
// gRPC-Web message announced over the body limit, refused by Connect's router after its first
// bytes): the rest of the body is read and dropped, so the same connection serves the next request
// (before, the rest stayed unread, the next request was never parsed, and the connection was reset
// by the keep-alive timeout: about 1% of connectconformance's cases); a rest longer than the body
// limit closes the connection instead, announced (`Connection: close`), after the client read the
// answer (src/http/unread-body.ts).

let app: TestApp;
let taskId: string;

beforeAll(async () => {
  app = await startTestApp("sqlite");
  ({ taskId } = await app.planWith("# The plan\n"));
});
afterAll(() => app.stop());

interface Answer {
  readonly status: number;
  readonly headers: IncomingMessage["headers"];
  readonly body: Buffer;
  readonly reusedSocket: boolean;
  readonly socketClosed: Promise<void>;
}

/**
 * A gRPC-Web GetPlan whose first frame announces `announced` bytes: its header and 1 KiB, then,
 * a moment later (the router has refused the frame by then), `rest` bytes more, chunked.
 */
function overLimitCall(agent: Agent, announced: number, rest: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const call = request(
      {
        agent,
        host: "127.0.0.1",
        port: app.httpPort,
        method: "POST",
        path: "/taskplans.v1.PlanService/GetPlan",
        headers: { "content-type": "application/grpc-web+proto", "x-grpc-web": "1" },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
            reusedSocket: call.reusedSocket,
            socketClosed: new Promise((closed) =>
              socket?.destroyed ? closed() : socket?.once("close", () => closed()),
            ),
          });
        });
      },
    );
    let socket: Socket | undefined;
    call.once("socket", (s) => (socket = s));
    // Once the answer was read the rest may meet a closed connection: the answer is what counts.
    call.on("error", reject);
    const frame = Buffer.alloc(5);
    frame.writeUInt32BE(announced, 1);
    call.write(Buffer.concat([frame, Buffer.alloc(1024)]));
    setTimeout(() => {
      for (let sent = 0; sent < rest; sent += 16 * 1024)
        call.write(Buffer.alloc(Math.min(16 * 1024, rest - sent)));
      call.end();
    }, 200);
  });
}

/** GetPlan over Connect JSON on the agent's connection. */
function getPlan(agent: Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ taskId });
    const call = request(
      {
        agent,
        host: "127.0.0.1",
        port: app.httpPort,
        method: "POST",
        path: "/taskplans.v1.PlanService/GetPlan",
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
            reusedSocket: call.reusedSocket,
            socketClosed: Promise.resolve(),
          }),
        );
      },
    );
    call.on("error", reject);
    call.end(body);
  });
}

/** The grpc-status of a gRPC-Web answer (its trailer frame, the last of the body). */
function grpcStatus(answer: Answer): string | undefined {
  return /grpc-status:\s*(\d+)/.exec(answer.body.toString("latin1"))?.[1];
}

describe("a connection after an answer that came before its request's body ended", () => {
  it("reads the rest and serves the connection's next request", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const refused = await overLimitCall(agent, MAX_MESSAGE_BYTES + 1, 64 * 1024);
      expect(grpcStatus(refused)).toBe("8"); // RESOURCE_EXHAUSTED: the message is over the limit
      expect(refused.headers.connection).not.toBe("close");
      const next = await getPlan(agent);
      expect(next.reusedSocket).toBe(true);
      expect(next.status).toBe(200);
      expect(JSON.parse(next.body.toString("utf8"))).toMatchObject({ plan: { content: "# The plan\n" } });
    } finally {
      agent.destroy();
    }
  });

  it("closes it, announced, when the rest is longer than the body limit, after the client read the answer", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const refused = await overLimitCall(agent, MAX_MESSAGE_BYTES + 1, 2 * MAX_MESSAGE_BYTES);
      expect(grpcStatus(refused)).toBe("8");
      expect(refused.headers.connection).toBe("close");
      // Closed by the server (the linger's bound), not left open.
      const closedWithin = await Promise.race([
        refused.socketClosed.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 10 * (DRAIN_MAX_MS + LINGER_MS))),
      ]);
      expect(closedWithin).toBe(true);
      const next = await getPlan(agent);
      expect(next.reusedSocket).toBe(false);
      expect(next.status).toBe(200);
    } finally {
      agent.destroy();
    }
  });
});
