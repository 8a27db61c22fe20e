import { connect, createServer, type Socket } from "node:net";

/**
 * A TCP proxy in front of a database that can forget its connections the way a NAT gateway or a load
 * balancer drops an idle flow: the server's side is closed (it ends the session), the client hears
 * nothing, and the client's next bytes are answered with a reset. A pooled connection then looks
 * open until a statement is sent on it.
 */
export interface ForgetfulProxy {
  readonly port: number;
  /** Connections opened through the proxy so far. */
  opened(): number;
  /** Forgets every open connection; resolves once the server's sides are closed. */
  forget(): Promise<void>;
  close(): Promise<void>;
}

interface Flow {
  readonly client: Socket;
  readonly upstream: Socket;
  forgotten: boolean;
}

export async function startForgetfulProxy(upstreamPort: number): Promise<ForgetfulProxy> {
  const flows = new Set<Flow>();
  let opened = 0;
  const server = createServer((client) => {
    opened++;
    const upstream = connect(upstreamPort, "127.0.0.1");
    const flow: Flow = { client, upstream, forgotten: false };
    flows.add(flow);
    const drop = () => {
      flows.delete(flow);
      client.destroy();
      upstream.destroy();
    };
    upstream.on("data", (chunk: Buffer) => client.write(chunk));
    client.on("data", (chunk: Buffer) => {
      if (flow.forgotten) {
        flows.delete(flow);
        client.resetAndDestroy(); // the flow is unknown: RST
      } else upstream.write(chunk);
    });
    client.on("error", drop).on("close", drop);
    upstream.on("error", () => upstream.destroy());
    upstream.on("close", () => {
      if (!flow.forgotten) drop();
    });
  });
  const port = await new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)),
  );
  return {
    port,
    opened: () => opened,
    async forget() {
      const closing = [...flows].map((flow) => {
        flow.forgotten = true;
        return new Promise<void>((resolve) => {
          flow.upstream.once("close", () => resolve());
          flow.upstream.destroy();
        });
      });
      await Promise.all(closing);
    },
    close: () =>
      new Promise((resolve) => {
        for (const flow of [...flows]) {
          flow.client.destroy();
          flow.upstream.destroy();
        }
        server.close(() => resolve());
      }),
  };
}
