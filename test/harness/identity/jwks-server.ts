import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { Socket } from "node:net";
import { exportJWK, generateKeyPair, importJWK, type CryptoKey, SignJWT, type JWTPayload } from "jose";
import type { TestCa } from "./pki";

/** A signing key of the test identity provider. */
export interface SigningKey {
  readonly kid: string;
  /** The algorithm the key signs with and is published for. */
  readonly alg: "ES256" | "RS256";
  readonly privateKey: CryptoKey;
}

/**
 * A local HTTPS identity provider: an OIDC discovery document at
 * `<issuer>/.well-known/openid-configuration` and a JWK Set at `/jwks`, serving the keys it is told
 * to publish, counting the requests it answers, and able to go down and come back on its port or
 * to answer one JWK Set request badly.
 */
export interface JwksServer {
  readonly port: number;
  readonly issuer: string;
  readonly jwksUrl: string;
  /** A new ES256 (or RS256) key, not published until `publish` names it. */
  newKey(alg?: SigningKey["alg"]): Promise<SigningKey>;
  /** The keys the JWK Set lists from now on (each with its `alg`). */
  publish(keys: readonly SigningKey[]): Promise<void>;
  /**
   * A token signed by `key` (its kid in the header; `kid: null`: no kid), with the standard claims
   * and `claims`; `alg` signs with another algorithm than the key's (PS256 with an RS256 key).
   */
  sign(
    key: SigningKey,
    claims: JWTPayload,
    options?: { audience?: string; kid?: string | null; alg?: string },
  ): Promise<string>;
  /** JWK Set requests answered so far. */
  jwksRequests(): number;
  /**
   * The next JWK Set request only: `cut-off` answers 200 with the full Content-Length, sends 100
   * bytes and closes the connection; `trickle` sends the document one byte per 100 ms.
   */
  misbehaveOnce(fault: JwksFault): void;
  down(): Promise<void>;
  up(): Promise<void>;
  stop(): Promise<void>;
}

export type JwksFault = "cut-off" | "trickle";

export async function startJwksServer(ca: TestCa, audience: string): Promise<JwksServer> {
  const identity = ca.issue(`idp-${randomBytes(3).toString("hex")}`);
  const options = { cert: readFileSync(identity.certFile), key: readFileSync(identity.keyFile) };
  let published: object[] = [];
  let requests = 0;
  let fault: JwksFault | null = null;
  let port = 0;
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  const issuerOf = () => `https://127.0.0.1:${port}/realms/agents`;
  const listen = (onPort: number) =>
    new Promise<void>((resolve, reject) => {
      const next = createServer(options, (req, res) => {
        if (req.url === "/realms/agents/.well-known/openid-configuration") {
          res.writeHead(200, { "content-type": "application/json" });
          return void res.end(
            JSON.stringify({ issuer: issuerOf(), jwks_uri: `https://127.0.0.1:${port}/jwks` }),
          );
        }
        if (req.url !== "/jwks") return void res.writeHead(404).end();
        requests++;
        const body = Buffer.from(JSON.stringify({ keys: published }));
        res.writeHead(200, { "content-type": "application/jwk-set+json", "content-length": body.length });
        const now = fault;
        fault = null;
        if (now === "cut-off") return void res.write(body.subarray(0, 100), () => res.socket?.destroy());
        if (now === "trickle") return trickle(res, body);
        res.end(body);
      });
      next.on("connection", (socket: Socket) => {
        sockets.add(socket);
        socket.once("close", () => sockets.delete(socket));
      });
      next.once("error", reject);
      next.listen(onPort, "127.0.0.1", () => {
        const address = next.address();
        port = typeof address === "object" && address ? address.port : onPort;
        server = next;
        resolve();
      });
    });
  const close = () =>
    new Promise<void>((resolve) => {
      if (!server) return resolve();
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
      server = null;
    });
  await listen(0);
  return {
    port,
    issuer: issuerOf(),
    jwksUrl: `https://127.0.0.1:${port}/jwks`,
    async newKey(alg = "ES256") {
      const { privateKey } = await generateKeyPair(alg, { extractable: true });
      return { kid: `key-${randomBytes(4).toString("hex")}`, alg, privateKey };
    },
    async publish(keys) {
      published = await Promise.all(
        keys.map(async (key) => {
          const { d: _private, ...jwk } = await exportJWK(key.privateKey);
          return { ...jwk, kid: key.kid, alg: key.alg, use: "sig" };
        }),
      );
    },
    async sign(key, claims, signOptions = {}) {
      const alg = signOptions.alg ?? key.alg;
      // The same key material under another algorithm (WebCrypto keys are bound to one).
      const signingKey =
        alg === key.alg ? key.privateKey : await importJWK(await exportJWK(key.privateKey), alg);
      return new SignJWT(claims)
        .setProtectedHeader({
          alg,
          ...(signOptions.kid === null ? {} : { kid: signOptions.kid ?? key.kid }),
          typ: "JWT",
        })
        .setIssuer(issuerOf())
        .setAudience(signOptions.audience ?? audience)
        .setIssuedAt()
        .setExpirationTime("10m")
        .sign(signingKey);
    },
    jwksRequests: () => requests,
    misbehaveOnce: (next) => {
      fault = next;
    },
    down: close,
    up: () => listen(port),
    stop: close,
  };
}

// One byte per 100 ms until the body is sent or the client goes away.
function trickle(res: ServerResponse, body: Buffer): void {
  let sent = 0;
  const timer = setInterval(() => {
    if (sent < body.length) res.write(body.subarray(sent, ++sent));
    else res.end();
  }, 100);
  res.once("close", () => clearInterval(timer));
}
