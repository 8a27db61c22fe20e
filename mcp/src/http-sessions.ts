import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  StreamableHTTPServerTransport,
  type StreamableHTTPServerTransportOptions,
} from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { guardRequests } from "./request-guard";
import { answer } from "./request-body";

/** Most HTTP sessions held at once; past it, an initialize is served without a session. */
export const MAX_SESSIONS = 256;
/** A session with no open stream and no request for this long is closed (its watches end). */
export const SESSION_IDLE_MS = 30 * 60_000;

interface Session {
  readonly transport: StreamableHTTPServerTransport;
  readonly server: McpServer;
  /** The bearer token it was opened with: every later request must carry the same one. */
  readonly token: string | undefined;
  lastSeen: number;
  /** Open GET streams (where a subscription's notifications go). */
  streams: number;
}

/**
 * The Streamable HTTP sessions (`Mcp-Session-Id`): a host that initializes gets a session of its
 * own, with an MCP server bound to its bearer token that lives across requests, so that
 * resources/subscribe can send notifications on the host's GET stream. A request naming a session
 * that does not exist, or with another token than the one that opened it, is 404 (the client then
 * initializes again), disclosing nothing of other sessions. Bounded: MAX_SESSIONS at once, and
 * each is closed after SESSION_IDLE_MS without a request or an open stream.
 */
export class McpHttpSessions {
  private readonly sessions = new Map<string, Session>();
  private readonly sweep: NodeJS.Timeout;

  constructor(
    private readonly open: (token: string | undefined) => McpServer,
    private readonly transportOptions: () => StreamableHTTPServerTransportOptions,
    private readonly idleMs = SESSION_IDLE_MS,
    private readonly max = MAX_SESSIONS,
  ) {
    this.sweep = setInterval(() => this.closeIdle(), Math.min(60_000, idleMs));
    this.sweep.unref();
  }

  /** Sessions held now. */
  get size(): number {
    return this.sessions.size;
  }

  /** Serves a request naming session `id` (POST, the GET stream, or DELETE to end it). */
  async serve(
    id: string,
    token: string | undefined,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const session = this.sessions.get(id);
    if (!session || session.token !== token) return answer(res, 404, -32001, "Session not found");
    session.lastSeen = Date.now();
    if (req.method === "GET") {
      session.streams++;
      res.once("close", () => {
        session.streams--;
        session.lastSeen = Date.now();
      });
    }
    await session.transport.handleRequest(req, res);
  }

  /**
   * Starts a session with an initialize request (`body`, already read). Resolves false, having
   * answered nothing, when MAX_SESSIONS are held: the caller serves it without a session.
   */
  async start(
    token: string | undefined,
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
  ): Promise<boolean> {
    if (this.sessions.size >= this.max) return false;
    const server = this.open(token);
    let session: Session | undefined;
    const transport = new StreamableHTTPServerTransport({
      ...this.transportOptions(),
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        session = { transport, server, token, lastSeen: Date.now(), streams: 0 };
        this.sessions.set(id, session);
      },
      onsessionclosed: (id) => this.drop(id),
    });
    await server.connect(guardRequests(transport));
    await transport.handleRequest(req, res, body);
    if (!session) await server.close(); // the initialize was refused: no session came of it
    return true;
  }

  /** Closes every session (the HTTP server is stopping). */
  async closeAll(): Promise<void> {
    clearInterval(this.sweep);
    await Promise.all([...this.sessions.keys()].map((id) => this.drop(id)));
  }

  private closeIdle(): void {
    const now = Date.now();
    for (const [id, session] of this.sessions)
      if (session.streams === 0 && now - session.lastSeen > this.idleMs) void this.drop(id);
  }

  private async drop(id: string): Promise<void> {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    await session.server.close().catch(() => undefined); // closes its transport; its watches end
  }
}
