import type { RequestListener } from "node:http";
import { createServer, type Server } from "node:https";
import type { TlsSource } from "./tls-files";

/** An HTTPS server whose certificate follows `tls`: new connections get a rotated one. */
export function httpsServer(tls: TlsSource, serve: RequestListener): Server {
  const { cert, key } = tls.current();
  const server = createServer({ cert, key }, serve);
  const unsubscribe = tls.onChange((material) =>
    server.setSecureContext({ cert: material.cert, key: material.key }),
  );
  server.once("close", unsubscribe);
  return server;
}
