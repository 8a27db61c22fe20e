import type { IncomingMessage, ServerResponse } from "node:http";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  type ContextValues,
  createConnectRouter,
} from "@connectrpc/connect";
import type { ConnectRouterOptions } from "@connectrpc/connect";
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import type { Logger } from "pino";

/**
 * connect-node's request handler (its connectNodeAdapter, from the same public parts) with one
 * difference: a response that could not be written (the client went away mid-stream) is logged at
 * debug level as one JSON line through the service's logger, not printed to stderr with a stack.
 * Unknown paths answer 404.
 */
export function connectHandler(
  options: ConnectRouterOptions & {
    routes: (router: ConnectRouter) => void;
    contextValues: (req: IncomingMessage) => ContextValues;
    logger: Logger;
  },
): (req: IncomingMessage, res: ServerResponse) => void {
  const router = createConnectRouter({ acceptCompression: [compressionGzip, compressionBrotli], ...options });
  options.routes(router);
  const handlers = new Map(router.handlers.map((handler) => [handler.requestPath, handler]));
  return (req, res) => {
    const handler = handlers.get((req.url ?? "").split("?", 1)[0] ?? "");
    if (!handler) return void res.writeHead(404).end();
    handler(universalRequestFromNodeRequest(req, res, undefined, options.contextValues(req)))
      .then((response) => universalResponseToNodeResponse(response, res))
      .catch((reason: unknown) => {
        const error = ConnectError.from(reason);
        if (error.code === Code.Aborted) return;
        options.logger.debug(
          { method: handler.method.name, error: error.rawMessage },
          "http response not written (the client went away)",
        );
      });
  };
}
