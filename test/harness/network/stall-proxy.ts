import { createServer, type Server, type Socket, connect } from "node:net";

/**
 * A TCP proxy to 127.0.0.1:`targetPort` that can stop reading from the server: a client behind it
 * that "does not read", below HTTP/2's flow control (grpc-js and Node keep reading into memory even
 * while a stream is paused), so the server's own buffers fill as they would for a stalled network.
 */
export interface StallProxy {
  readonly port: number;
  stall(): void;
  flow(): void;
  close(): Promise<void>;
}

export async function startStallProxy(targetPort: number): Promise<StallProxy> {
  const upstreams = new Set<Socket>();
  let stalled = false;
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, "127.0.0.1");
    upstreams.add(upstream);
    if (stalled) upstream.pause();
    client.on("data", (chunk) => upstream.write(chunk));
    upstream.on("data", (chunk) => {
      if (!client.write(chunk)) upstream.pause();
    });
    client.on("drain", () => {
      if (!stalled) upstream.resume();
    });
    const close = () => {
      client.destroy();
      upstream.destroy();
      upstreams.delete(upstream);
    };
    client.on("close", close).on("error", close);
    upstream.on("close", close).on("error", close);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("proxy did not bind");
  return {
    port: address.port,
    stall() {
      stalled = true;
      for (const upstream of upstreams) upstream.pause();
    },
    flow() {
      stalled = false;
      for (const upstream of upstreams) upstream.resume();
    },
    close() {
      for (const upstream of upstreams) upstream.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
