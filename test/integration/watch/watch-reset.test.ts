import { connect, constants as http2, type ClientHttp2Session, type ClientHttp2Stream } from "node:http2";
import { WatchPlanRequest } from "@taskplans/contract";
import { startTestApp, type TestApp } from "../../harness/servers/test-app";

// docs/watch.md "A risk: grpc-js's private fields": grpc-js has no public way to reset a server
// stream, so watch-transport.ts walks its call's private fields to the node:http2 stream. If a
// grpc-js upgrade reshapes them, the reset of an evicted stream silently does nothing and grpc-js
// keeps its copy of the message until the client reads: nothing else fails. This test does: a gRPC
// client that stops reading while another stream needs the replica's watch memory must see its
// stream reset (RST_STREAM ENHANCE_YOUR_CALM), not kept open.

const PLAN_LIMIT = 262_144;

/** One WatchPlan stream on its own raw HTTP/2 connection whose client never reads. */
async function stalledStream(port: number, taskId: string) {
  const session: ClientHttp2Session = connect(`http://127.0.0.1:${port}`);
  session.on("error", () => undefined);
  await new Promise<void>((resolve) => session.once("remoteSettings", () => resolve()));
  const message = Buffer.from(WatchPlanRequest.encode({ taskId, includeContent: true }).finish());
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  const stream: ClientHttp2Stream = session.request({
    ":method": "POST",
    ":path": "/taskplans.v1.PlanService/WatchPlan",
    "content-type": "application/grpc",
    te: "trailers",
  });
  stream.on("error", () => undefined);
  const responded = new Promise<void>((resolve) => stream.once("response", () => resolve()));
  const closed = new Promise<number>((resolve) => stream.once("close", () => resolve(stream.rstCode ?? -1)));
  stream.pause(); // never read: the stream's window is never given back
  stream.end(frame);
  await responded;
  return {
    /** The RST_STREAM code the stream closed with. */
    closed,
    close: () => {
      stream.destroy();
      session.destroy();
    },
  };
}

describe("an evicted gRPC WatchPlan stream is reset", () => {
  let app: TestApp;
  beforeAll(async () => {
    // The smallest budget: two streams writing a plan at the size limit (about 0.5 MiB each over
    // gRPC) do not fit it together.
    app = await startTestApp("sqlite", { env: { PLAN_WATCH_BUFFER_BYTES: String(1024 * 1024) } });
  });
  afterAll(async () => {
    await app.stop();
  });

  it("a client that stopped reading is reset with ENHANCE_YOUR_CALM when another stream needs the budget", async () => {
    const taskId = await app.newTask();
    const head = "# Plan\n";
    await app.plans.createPlan({ taskId, content: head + "x".repeat(PLAN_LIMIT - head.length) });
    const stuck = await stalledStream(app.port, taskId);
    // Stuck for longer than a second (watch-buffers.ts STUCK_MS): it may be evicted for another.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const others = [await stalledStream(app.port, taskId), await stalledStream(app.port, taskId)];
    try {
      let timer: NodeJS.Timeout | undefined;
      const code = await Promise.race([
        stuck.closed,
        new Promise<string>(
          (resolve) => (timer = setTimeout(() => resolve("still open after 10 s"), 10_000)),
        ),
      ]);
      clearTimeout(timer);
      expect(code).toBe(http2.NGHTTP2_ENHANCE_YOUR_CALM);
    } finally {
      for (const stream of [stuck, ...others]) stream.close();
    }
  }, 30_000);
});
