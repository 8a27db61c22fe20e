import type { JWK } from "jose";
import { matchKeys, MAX_CANDIDATES } from "../../../src/auth/key-match";

const rsa = (kid: string, extra: Partial<JWK> = {}): JWK => ({
  kty: "RSA",
  kid,
  n: "n",
  e: "AQAB",
  ...extra,
});
const ec = (kid: string, extra: Partial<JWK> = {}): JWK => ({
  kty: "EC",
  crv: "P-256",
  kid,
  x: "x",
  y: "y",
  ...extra,
});
const okp = (kid: string): JWK => ({ kty: "OKP", crv: "Ed25519", kid, x: "x" });
const kids = (match: ReturnType<typeof matchKeys>) =>
  match.kind === "keys" ? match.keys.map((k) => k.kid) : match.kind;

describe("matchKeys: the keys a token header may be verified with", () => {
  const set = [rsa("r1", { alg: "RS256" }), rsa("r2"), ec("e1", { alg: "ES256" }), okp("o1")];

  it.each([
    [{ alg: "RS256", kid: "r1" }, ["r1"]],
    [{ alg: "PS256", kid: "r2" }, ["r2"]], // a key without alg fits either RSA algorithm
    [{ alg: "ES256", kid: "e1" }, ["e1"]],
    [{ alg: "EdDSA", kid: "o1" }, ["o1"]],
    [{ alg: "RS256" }, ["r1", "r2"]], // no kid: every key of its type, in set order
    [{ alg: "PS256" }, ["r2"]], // r1 is published for RS256 only
    [{ alg: "ES256" }, ["e1"]],
    [{ alg: "EdDSA" }, ["o1"]],
  ])("%j -> %j", (header, expected) => {
    expect(kids(matchKeys(set, header))).toEqual(expected);
  });

  it.each([
    [{ alg: "RS256", kid: "missing" }, "unknown"], // a fetch may bring it
    [{ alg: "PS256", kid: "r1" }, "algorithm-not-allowed"], // the key says RS256: no fetch changes that
    [{ alg: "RS256", kid: "e1" }, "algorithm-not-allowed"], // the kid names an EC key
    [{ alg: "HS256", kid: "r1" }, "algorithm-not-allowed"],
    [{ alg: "none" }, "algorithm-not-allowed"],
    [{ kid: "r1" }, "algorithm-not-allowed"],
  ])("%j -> %s", (header, expected) => {
    expect(kids(matchKeys(set, header))).toBe(expected);
  });

  it("without kid: no key of the type is unknown (a fetch may bring one); keys of the type all published for another algorithm are algorithm-not-allowed", () => {
    expect(kids(matchKeys([rsa("r1")], { alg: "ES256" }))).toBe("unknown");
    expect(kids(matchKeys([rsa("r1", { alg: "RS256" })], { alg: "PS256" }))).toBe("algorithm-not-allowed");
  });

  it("skips keys not for signatures (use, key_ops) and EC keys of another curve", () => {
    const keys = [
      rsa("enc", { use: "enc" }),
      rsa("wrap", { key_ops: ["wrapKey"] }),
      rsa("sig", { use: "sig", key_ops: ["verify"] }),
      ec("p384", { crv: "P-384" }),
    ];
    expect(kids(matchKeys(keys, { alg: "RS256" }))).toEqual(["sig"]);
    expect(kids(matchKeys(keys, { alg: "RS256", kid: "enc" }))).toBe("unknown");
    expect(kids(matchKeys(keys, { alg: "ES256", kid: "p384" }))).toBe("algorithm-not-allowed");
  });

  it(`tries at most ${MAX_CANDIDATES} keys for one token`, () => {
    const many = Array.from({ length: 20 }, (_, i) => rsa(`r${i}`));
    expect(kids(matchKeys(many, { alg: "RS256" }))).toEqual(many.slice(0, MAX_CANDIDATES).map((k) => k.kid));
  });
});
