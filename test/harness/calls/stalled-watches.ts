import { connect, type ClientHttp2Session, type ClientHttp2Stream } from "node:http2";
import { WatchPlanRequest } from "@taskplans/contract";

/** WatchPlan streams on one raw HTTP/2 connection whose client never reads a byte of them. */
export interface StalledWatches {
  /** Streams whose response headers arrived (the server took them). */
  started(): number;
  /** HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS as the server announced it. */
  readonly maxConcurrentStreams: number | undefined;
  close(): Promise<void>;
}

/**
 * Opens `count` WatchPlan streams for `request` on one HTTP/2 connection to 127.0.0.1:`port`, as an
 * attacker or a stuck client would: each sends its ~60-byte request and never reads, so HTTP/2's flow
 * control soon stops the server's writes and whatever the server queues stays on the server.
 */
export async function openStalledWatches(
  port: number,
  count: number,
  request: WatchPlanRequest,
  token?: string,
): Promise<StalledWatches> {
  const session: ClientHttp2Session = connect(`http://127.0.0.1:${port}`);
  session.on("error", () => undefined);
  await new Promise<void>((resolve, reject) => {
    session.once("remoteSettings", () => resolve());
    session.once("error", reject);
  });
  const message = Buffer.from(WatchPlanRequest.encode(request).finish());
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  let started = 0;
  const streams: ClientHttp2Stream[] = [];
  for (let i = 0; i < count; i++) {
    const stream = session.request({
      ":method": "POST",
      ":path": "/taskplans.v1.PlanService/WatchPlan",
      "content-type": "application/grpc",
      te: "trailers",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    });
    stream.on("error", () => undefined);
    stream.on("response", () => (started += 1));
    stream.pause(); // never read: the stream's window is never given back
    stream.end(frame);
    streams.push(stream);
  }
  return {
    started: () => started,
    maxConcurrentStreams: session.remoteSettings.maxConcurrentStreams,
    close: () =>
      new Promise<void>((resolve) => {
        for (const stream of streams) stream.destroy();
        session.destroy();
        if (session.closed) resolve();
        else session.once("close", () => resolve());
      }),
  };
}
