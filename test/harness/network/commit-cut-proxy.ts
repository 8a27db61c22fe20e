import { connect, createServer, type Socket } from "node:net";

/**
 * A TCP proxy in front of MariaDB that stops one statement of the MySQL protocol where a crash would:
 * armed with a marker (a piece of SQL text, e.g. "COMMIT"), it finds the next packet from a client
 * that carries it and either
 * - "answered": forwards it, waits for the server's whole answer (until it has been quiet for
 *   ANSWERED_QUIET_MS), and drops that answer: the server ran the statement, the client never hears
 *   (a COMMIT applied and unacknowledged), or
 * - "unsent": drops the packet itself: the server never sees it.
 * The flow then stays silent both ways (nothing more reaches the client or the server) until the
 * test ends it, usually by killing the database (`kill -9`), which closes every flow.
 */
export interface CommitCutProxy {
  readonly port: number;
  /** Arms a cut of the next packet carrying `marker`; resolves when it has been cut. */
  cutNext(marker: string, mode: "answered" | "unsent"): Promise<void>;
  close(): Promise<void>;
}

interface Armed {
  readonly marker: string;
  readonly mode: "answered" | "unsent";
  readonly cut: () => void;
}

// How long the server must have sent nothing more before its answer counts as whole.
const ANSWERED_QUIET_MS = 300;

export async function startCommitCutProxy(upstreamPort: number): Promise<CommitCutProxy> {
  const sockets = new Set<Socket>();
  let armed: Armed | null = null;
  const server = createServer((client) => {
    const upstream = connect(upstreamPort, "127.0.0.1");
    sockets.add(client).add(upstream);
    // "open": both ways; "awaiting": the marked packet forwarded, the server's answer awaited;
    // "silent": nothing more passes.
    let state: "open" | "awaiting" | "silent" = "open";
    let onAnswer: (() => void) | null = null;
    let quiet: NodeJS.Timeout | undefined;
    upstream.on("data", (chunk: Buffer) => {
      if (state === "open") client.write(chunk);
      else if (state === "awaiting") {
        // A multi-statement query is answered statement by statement, each as it completes: the
        // whole answer (the COMMIT's included) has come once the server has been quiet a while.
        clearTimeout(quiet);
        quiet = setTimeout(() => {
          state = "silent";
          onAnswer?.();
        }, ANSWERED_QUIET_MS);
      }
    });
    client.on("data", (chunk: Buffer) => {
      if (state !== "open") return;
      const cut = armed;
      // A COM_QUERY's SQL travels as text: the marker is found in the chunk that carries it.
      if (cut && chunk.toString("latin1").includes(cut.marker)) {
        armed = null;
        if (cut.mode === "unsent") {
          state = "silent";
          cut.cut();
          return;
        }
        state = "awaiting";
        onAnswer = cut.cut;
      }
      upstream.write(chunk);
    });
    const close = () => {
      clearTimeout(quiet);
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("close", close).on("error", close);
    upstream.on("close", close).on("error", close);
  });
  const port = await new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)),
  );
  return {
    port,
    cutNext(marker, mode) {
      return new Promise<void>((resolve) => {
        armed = { marker, mode, cut: resolve };
      });
    },
    close: () =>
      new Promise((resolve) => {
        armed = null;
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
