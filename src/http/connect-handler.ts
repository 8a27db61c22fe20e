import type { IncomingMessage, ServerResponse } from "node:http";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  type ContextValues,
  createConnectRouter,
  createContextValues,
} from "@connectrpc/connect";
import type { ConnectRouterOptions } from "@connectrpc/connect";
import {
  createMethodUrl,
  type UniversalServerRequest,
  type UniversalServerResponse,
  validateUniversalHandlerOptions,
} from "@connectrpc/connect/protocol";
import {
  compressionBrotli,
  compressionGzip,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import type { Logger } from "pino";
import { type DoorService, serveOverConnect } from "./connect-routes";
import { DirectStream } from "./connect-stream";
import { DirectUnary } from "./connect-unary";
import { peerOf, PEER } from "./grpc-call";
import { settleUnread } from "./unread-body";

/**
 * The services on a node:http server. The Connect protocol's plain exchanges, unary calls and
 * server streams without compression, go the direct paths (connect-unary.ts, connect-stream.ts):
 * the router's per-call machinery cost more CPU than the whole call over the gRPC port
 * (docs/decisions/0013). Everything else goes through Connect's router. It is served as
 * connect-node's connectNodeAdapter serves it, with three differences
 * (`npm run bench:http-profile` measures them):
 * - the request's abort signal aborts only when the response closes before it was finished (the
 *   client went away), with a Canceled reason; the adapter aborted it after every response, and an
 *   abort without a reason builds a DOMException with a stack;
 * - a unary answer (one message, or a gRPC-Web message and its trailer) is written with one
 *   `end()`, without the adapter's per-chunk promises;
 * - a response that could not be written is logged at debug level as one JSON line through the
 *   service's logger, not printed to stderr with a stack.
 * Unknown paths answer 404. A body the handler left partly unread is read to its end, bounded,
 * before the answer, so that the connection serves its next request (unread-body.ts).
 */
export function connectHandler(
  options: ConnectRouterOptions & {
    services: readonly DoorService[];
    logger: Logger;
  },
): (req: IncomingMessage, res: ServerResponse) => void {
  const settings = { acceptCompression: [compressionGzip, compressionBrotli], ...options };
  const router: ConnectRouter = createConnectRouter(settings);
  const limits = validateUniversalHandlerOptions(settings);
  // The direct paths apply none of these; the router's own would then differ from them.
  if (limits.interceptors.length > 0 || limits.requireConnectProtocolHeader || limits.shutdownSignal)
    throw new Error(
      "the HTTP door's direct paths do not apply interceptors, a required protocol header or a shutdown signal",
    );
  const directOptions = {
    ...limits,
    jsonOptions: settings.jsonOptions ?? {},
    binaryOptions: settings.binaryOptions ?? {},
  };
  const direct = new Map<string, DirectUnary | DirectStream>();
  for (const service of options.services) {
    const endpoints = serveOverConnect(router, service);
    for (const endpoint of endpoints.unary)
      direct.set(createMethodUrl("/", endpoint.method), new DirectUnary(endpoint, directOptions));
    for (const endpoint of endpoints.streams)
      direct.set(createMethodUrl("/", endpoint.method), new DirectStream(endpoint, directOptions));
  }
  const handlers = new Map(router.handlers.map((handler) => [handler.requestPath, handler]));
  const failed = (method: string) => (reason: unknown) => {
    const error = ConnectError.from(reason);
    if (error.code === Code.Aborted || error.code === Code.Canceled) return;
    options.logger.debug(
      { method, error: error.rawMessage },
      "http response not written (the client went away)",
    );
  };
  return (req, res) => {
    const url = req.url ?? "";
    const query = url.indexOf("?");
    const path = query < 0 ? url : url.slice(0, query);
    const handler = handlers.get(path);
    if (!handler) return void res.writeHead(404).end();
    const served = direct.get(path)?.serve(req, res, peerOf(req), query < 0 ? "" : url.slice(query));
    if (served) return void served.catch(failed(handler.method.name));
    const unary = handler.method.methodKind === "unary";
    handler(universalRequest(req, res, createContextValues().set(PEER, peerOf(req))))
      .then(async (response) => {
        await settleUnread(req, res, limits.readMaxBytes);
        return unary && !response.trailer
          ? writeWhole(response, res)
          : universalResponseToNodeResponse(response, res);
      })
      .catch(failed(handler.method.name));
  };
}

/** A node:http request as Connect's universal request; its path matched a route. */
function universalRequest(
  req: IncomingMessage,
  res: ServerResponse,
  contextValues: ContextValues,
): UniversalServerRequest {
  const header = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2)
    header.append(req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string);
  const scheme = "encrypted" in req.socket && req.socket.encrypted ? "https" : "http";
  const gone = new AbortController();
  const abandoned = () => {
    if (!res.writableFinished) gone.abort(new ConnectError("the client went away", Code.Canceled));
  };
  res.once("close", abandoned);
  req.once("error", abandoned);
  return {
    httpVersion: req.httpVersion,
    method: req.method ?? "",
    url: `${scheme}://${req.headers.host ?? "localhost"}${req.url ?? "/"}`,
    header,
    // A handler that stops reading early (an error, a message over the limit) leaves the rest
    // of the body to settleUnread rather than destroying the request: a destroyed request's
    // remaining bytes stall its connection (unread-body.ts).
    body: req.iterator({ destroyOnReturn: false }) as AsyncIterable<Uint8Array>,
    signal: gone.signal,
    contextValues,
  };
}

/** A unary call's whole answer, written at once (its body is one message, or one and a trailer). */
async function writeWhole(response: UniversalServerResponse, res: ServerResponse): Promise<void> {
  const chunks: Uint8Array[] = [];
  if (response.body) for await (const chunk of response.body) chunks.push(chunk);
  const headers: Record<string, string> = {};
  response.header?.forEach((value, key) => (headers[key] = value));
  res.writeHead(response.status, headers);
  res.end(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
}
