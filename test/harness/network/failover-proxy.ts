import { createServer, type Server, type Socket, connect } from "node:net";

/**
 * A TCP proxy in front of one replica, as a Service address is in front of its pods: the test can
 * hold back the replica's answers (so a write commits and its answer never arrives), cut every
 * connection, and make new connections wait while the replica restarts. It works on bytes, so TLS
 * passes through it untouched.
 */
export interface FailoverProxy {
  readonly port: number;
  /** From now on the replica's bytes are kept from the clients. */
  holdAnswers(): void;
  /** How many bytes of answers are held back. */
  heldBytes(): number;
  /** New connections wait, unconnected, until `resume()`. */
  pause(): void;
  /** New (and waiting) connections go to `upstreamPort` again, and answers flow. */
  resume(): void;
  /** Closes every connection, both sides, dropping what was held. */
  cut(): void;
  close(): Promise<void>;
}

interface Pair {
  readonly client: Socket;
  upstream: Socket | null;
}

export async function startFailoverProxy(upstreamPort: () => number): Promise<FailoverProxy> {
  const pairs = new Set<Pair>();
  const waiting: Pair[] = [];
  let holding = false;
  let held = 0;
  let paused = false;

  const join = (pair: Pair) => {
    const upstream = connect(upstreamPort(), "127.0.0.1");
    pair.upstream = upstream;
    upstream.on("data", (chunk: Buffer) => {
      if (holding) held += chunk.length;
      else pair.client.write(chunk);
    });
    pair.client.on("data", (chunk: Buffer) => upstream.write(chunk));
    const end = () => drop(pair);
    upstream.on("error", end).on("close", end);
  };
  const drop = (pair: Pair) => {
    pair.client.destroy();
    pair.upstream?.destroy();
    pairs.delete(pair);
  };

  const server: Server = createServer((client) => {
    const pair: Pair = { client, upstream: null };
    pairs.add(pair);
    client.on("error", () => drop(pair)).on("close", () => drop(pair));
    if (paused) {
      client.pause(); // its bytes wait in the socket until it is joined
      waiting.push(pair);
    } else join(pair);
  });
  const port = await new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)),
  );
  return {
    port,
    holdAnswers: () => void (holding = true),
    heldBytes: () => held,
    pause: () => void (paused = true),
    resume() {
      paused = false;
      holding = false;
      held = 0;
      for (const pair of waiting.splice(0)) {
        if (pair.client.destroyed) continue;
        join(pair);
        pair.client.resume();
      }
    },
    cut() {
      for (const pair of [...pairs]) if (pair.upstream) drop(pair);
    },
    close: () =>
      new Promise((resolve) => {
        for (const pair of [...pairs]) drop(pair);
        server.close(() => resolve());
      }),
  };
}
