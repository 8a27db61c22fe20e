import { generateKeyPairSync } from "node:crypto";
import { SignJWT } from "jose";
import { AuthenticationError } from "../../src/auth/authentication-error";
import { createTokenVerifier } from "../../src/auth/token-verifier";

const secret = "0123456789abcdef0123456789abcdef";
const settings = { secret, publicKeyPem: null, issuer: "https://issuer", audience: "taskplans" };
const claims = { kind: "agent", name: "Claude", workspaces: ["ws-1"] };

function sign(
  payload: Record<string, unknown>,
  options: { key?: string; exp?: string | number; iss?: string } = {},
) {
  return new SignJWT(payload)
    .setProtectedHeader({ alg: "HS256" })
    .setSubject("agent-7")
    .setIssuer(options.iss ?? "https://issuer")
    .setAudience("taskplans")
    .setExpirationTime(options.exp ?? "5m")
    .sign(new TextEncoder().encode(options.key ?? secret));
}

async function reason(token: string | null): Promise<string> {
  try {
    await createTokenVerifier(settings).verify(token);
    return "ok";
  } catch (error) {
    if (error instanceof AuthenticationError) return error.reason;
    throw error;
  }
}

describe("token verification", () => {
  it("returns the identity from a valid token", async () => {
    const caller = await createTokenVerifier(settings).verify(await sign(claims));
    expect(caller).toMatchObject({ authenticated: true, subject: "agent-7", kind: "agent", name: "Claude" });
    expect(caller.workspaces).toEqual(new Set(["ws-1"]));
  });

  it("verifies an RS256 token against a PEM public key", async () => {
    const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256" })
      .setSubject("u")
      .setExpirationTime("5m")
      .sign(privateKey);
    const verifier = createTokenVerifier({
      secret: null,
      publicKeyPem: publicKey.export({ type: "spki", format: "pem" }).toString(),
      issuer: null,
      audience: null,
    });
    await expect(verifier.verify(token)).resolves.toMatchObject({ subject: "u", kind: "agent" });
  });

  it("rejects a missing token", async () => expect(await reason(null)).toBe("TOKEN_MISSING"));
  it("rejects an expired token", async () =>
    expect(await reason(await sign(claims, { exp: Math.floor(Date.now() / 1000) - 60 }))).toBe(
      "TOKEN_EXPIRED",
    ));
  it("rejects a forged token (other key)", async () =>
    expect(await reason(await sign(claims, { key: "x".repeat(32) }))).toBe("TOKEN_INVALID"));
  it("rejects a malformed token", async () => expect(await reason("not.a.jwt")).toBe("TOKEN_INVALID"));
  it("rejects another issuer", async () =>
    expect(await reason(await sign(claims, { iss: "evil" }))).toBe("TOKEN_INVALID"));
  it("rejects a token without kind or workspaces", async () => {
    expect(await reason(await sign({ name: "x", workspaces: [] }))).toBe("TOKEN_INVALID");
    expect(await reason(await sign({ kind: "agent" }))).toBe("TOKEN_INVALID");
  });
});
