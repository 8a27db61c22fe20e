import { generateKeyPairSync } from "node:crypto";
import { SignJWT } from "jose";
import { AuthenticationError } from "../../../src/auth/authentication-error";
import { bearerTokenOf } from "../../../src/auth/bearer-header";
import { createTokenVerifier, DEFAULT_CLAIMS } from "../../../src/auth/token-verifier";

const secret = "0123456789abcdef0123456789abcdef";
const settings = {
  secret,
  publicKeyPem: null,
  issuer: "https://issuer",
  audience: "taskplans",
  clockSkewMs: 60_000,
  claims: DEFAULT_CLAIMS,
};
const claims = { kind: "agent", name: "Claude", workspaces: ["ws-1"] };

function sign(
  payload: Record<string, unknown>,
  options: { key?: string; exp?: string | number; iss?: string; iat?: number; nbf?: number } = {},
) {
  const jwt = new SignJWT(payload)
    .setProtectedHeader({ alg: "HS256" })
    .setSubject("agent-7")
    .setIssuer(options.iss ?? "https://issuer")
    .setAudience("taskplans")
    .setExpirationTime(options.exp ?? "5m");
  if (options.iat !== undefined) jwt.setIssuedAt(options.iat);
  if (options.nbf !== undefined) jwt.setNotBefore(options.nbf);
  return jwt.sign(new TextEncoder().encode(options.key ?? secret));
}

/** Epoch seconds `seconds` from now (negative: in the past). */
const fromNow = (seconds: number) => Math.floor(Date.now() / 1000) + seconds;

async function reason(token: string | null, clockSkewMs = settings.clockSkewMs): Promise<string> {
  try {
    await createTokenVerifier({ ...settings, clockSkewMs }).verify(token);
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
      clockSkewMs: 0,
      claims: DEFAULT_CLAIMS,
    });
    await expect(verifier.verify(token)).resolves.toMatchObject({ subject: "u", kind: "agent" });
  });

  it("rejects a missing token", async () => expect(await reason(null)).toBe("TOKEN_MISSING"));
  it("rejects a token expired longer ago than the clock skew", async () =>
    expect(await reason(await sign(claims, { exp: fromNow(-600) }))).toBe("TOKEN_EXPIRED"));
  it("rejects a forged token (other key)", async () =>
    expect(await reason(await sign(claims, { key: "x".repeat(32) }))).toBe("TOKEN_INVALID"));
  it("rejects a malformed token", async () => expect(await reason("not.a.jwt")).toBe("TOKEN_INVALID"));
  it("rejects another issuer", async () =>
    expect(await reason(await sign(claims, { iss: "evil" }))).toBe("TOKEN_INVALID"));
  it("rejects a token without kind or workspaces", async () => {
    expect(await reason(await sign({ name: "x", workspaces: [] }))).toBe("TOKEN_INVALID");
    expect(await reason(await sign({ kind: "agent" }))).toBe("TOKEN_INVALID");
  });

  it("a token issued (iat) or valid from (nbf) further ahead than the clock skew is TOKEN_INVALID", async () => {
    expect(await reason(await sign(claims, { iat: fromNow(600) }))).toBe("TOKEN_INVALID");
    expect(await reason(await sign(claims, { nbf: fromNow(600) }))).toBe("TOKEN_INVALID");
    const early = await createTokenVerifier(settings)
      .verify(await sign(claims, { iat: fromNow(600) }))
      .catch((error: unknown) => error);
    expect((early as AuthenticationError).message).toMatch(/not valid yet/);
  });

  it("the same clock skew applies to iat, nbf and exp: within it a token is accepted, beyond it not", async () => {
    // The issuer's clock is 30 s ahead of ours (iat, nbf), or ours is 30 s ahead (exp).
    const skewed = [{ iat: fromNow(30) }, { nbf: fromNow(30) }, { exp: fromNow(-30) }];
    for (const times of skewed) {
      const token = await sign(claims, times);
      expect([times, await reason(token)]).toEqual([times, "ok"]);
      expect([times, await reason(token, 0)]).toEqual([
        times,
        "exp" in times ? "TOKEN_EXPIRED" : "TOKEN_INVALID",
      ]);
    }
  });
});

describe("the authorization header", () => {
  it("absent is no token (TOKEN_MISSING follows); 'Bearer <token>' gives the token, the scheme in any case", () => {
    expect(bearerTokenOf([])).toBeNull();
    expect(bearerTokenOf(["Bearer abc.def-ghi_jk"])).toBe("abc.def-ghi_jk");
    expect(bearerTokenOf(["bearer abc"])).toBe("abc");
  });

  it.each([
    ["no scheme", "abc.def.ghi"],
    ["another scheme", "Basic dXNlcjpwYXNz"],
    ["trailing spaces", "Bearer abc.def.ghi  "],
    ["leading space", " Bearer abc.def.ghi"],
    ["a tab instead of a space", "Bearer\tabc"],
    ["the scheme alone", "Bearer"],
    ["the scheme and a space", "Bearer "],
    ["two tokens", "Bearer abc def"],
    ["empty", ""],
  ])("present but %s is TOKEN_INVALID, not TOKEN_MISSING", (_name, header) => {
    let error: unknown = null;
    try {
      bearerTokenOf([header]);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as AuthenticationError).reason).toBe("TOKEN_INVALID");
  });

  it("two authorization values are TOKEN_INVALID (which one would count is ambiguous)", () => {
    expect(() => bearerTokenOf(["Bearer a", "Bearer b"])).toThrow(AuthenticationError);
  });
});
