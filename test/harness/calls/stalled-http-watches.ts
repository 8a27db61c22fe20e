import { connect, type Socket } from "node:net";

/** WatchPlan streams over HTTP/1.1 (Connect JSON, one connection each) whose client never reads. */
export interface StalledHttpWatches {
  /** Connections the server has closed (a stream ended for its budget, or refused at the cap). */
  closed(): number;
  close(): Promise<void>;
}

/**
 * Opens `count` Connect JSON WatchPlan streams to 127.0.0.1:`port`, each on its own HTTP/1.1
 * connection, as an attacker would: each sends its request and never reads a byte, so whatever
 * the server writes stays in its socket and in the server until the server lets it go.
 */
export async function openStalledHttpWatches(
  port: number,
  count: number,
  request: { taskId: string; afterVersion?: number; includeContent: boolean },
): Promise<StalledHttpWatches> {
  const json = Buffer.from(JSON.stringify(request));
  const envelope = Buffer.alloc(5 + json.length);
  envelope.writeUInt32BE(json.length, 1);
  json.copy(envelope, 5);
  const head =
    `POST /taskplans.v1.PlanService/WatchPlan HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
    `Content-Type: application/connect+json\r\nContent-Length: ${envelope.length}\r\n\r\n`;
  const sockets: Socket[] = [];
  let closed = 0;
  await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<void>((resolve) => {
          const socket = connect(port, "127.0.0.1", () => {
            socket.write(Buffer.concat([Buffer.from(head), envelope]));
            resolve();
          });
          socket.pause(); // never read: the server's writes fill the socket and stay with it
          socket.on("error", () => undefined);
          socket.once("close", () => {
            closed += 1;
            resolve();
          });
          sockets.push(socket);
        }),
    ),
  );
  return {
    closed: () => closed,
    close: async () => {
      await Promise.all(
        sockets.map(
          (socket) =>
            new Promise<void>((resolve) => {
              if (socket.destroyed) return resolve();
              socket.once("close", () => resolve());
              socket.destroy();
            }),
        ),
      );
    },
  };
}
