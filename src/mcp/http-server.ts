import { createServer, type IncomingMessage, type Server } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { PlanServiceClient } from "../../generated/ts/taskplans/v1/plan_service";
import { createPlanMcpServer } from "./mcp-server";

const MAX_BODY_BYTES = 2 * 1024 * 1024;

/**
 * MCP over Streamable HTTP at POST /mcp, stateless: each request gets its own MCP server bound to
 * that request's bearer token, which is forwarded to the plan service as call credentials.
 */
export async function startMcpHttpServer(options: {
  readonly client: PlanServiceClient;
  readonly taskId?: string | undefined;
  readonly host: string;
  readonly port: number;
}): Promise<{ port: number; close(): Promise<void> }> {
  const http: Server = createServer((req, res) => {
    if (req.url?.split("?")[0] !== "/mcp") return void res.writeHead(404).end();
    if (req.method !== "POST") return void res.writeHead(405, { allow: "POST" }).end();
    readJson(req).then(
      async (body) => {
        const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "")?.[1];
        const server = createPlanMcpServer({ client: options.client, token, taskId: options.taskId });
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        });
        res.on("close", () => {
          void transport.close();
          void server.close();
        });
        await server.connect(transport);
        await transport.handleRequest(req, res, body);
      },
      () => res.writeHead(400, { "content-type": "application/json" }).end('{"error":"invalid JSON body"}'),
    );
  });
  await new Promise<void>((resolve) => http.listen(options.port, options.host, resolve));
  const address = http.address();
  return {
    port: typeof address === "object" && address ? address.port : options.port,
    close: () => new Promise((resolve) => http.close(() => resolve())),
  };
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) req.destroy(new Error("body too large"));
      else chunks.push(chunk);
    });
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch (error) {
        reject(error);
      }
    });
    req.on("error", reject);
  });
}
