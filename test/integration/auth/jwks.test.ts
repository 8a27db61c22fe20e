import { status } from "@grpc/grpc-js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AuthorKind } from "@taskplans/contract";
import { type RunningApp, startApp } from "../../../src/app";
import { loadConfig } from "../../../src/config/config";
import { capturingLogger } from "../../harness/fixtures/capturing-logger";
import { checkHealth, healthClient } from "../../harness/calls/grpc-clients";
import { type JwksServer, type SigningKey, startJwksServer } from "../../harness/identity/jwks-server";
import { makeCa, type TestCa } from "../../harness/identity/pki";
import { waitFor } from "../../harness/servers/processes";
import { connect, rpcError } from "../../harness/calls/rpc";
import { randomId } from "../../harness/servers/test-app";

// Tokens verified against an identity provider's published keys (PLAN_AUTH_JWKS_URL, or OIDC
// discovery from PLAN_AUTH_ISSUER), served by a local HTTPS JWKS server that rotates its keys and
// goes down mid-test. Claims are named as a Keycloak realm with two protocol mappers would name them.
const AUDIENCE = "taskplans";
const CLAIM_NAMES = {
  PLAN_AUTH_WORKSPACES_CLAIM: "https://taskplans.example/workspaces",
  PLAN_AUTH_KIND_CLAIM: "https://taskplans.example/kind",
  PLAN_AUTH_NAME_CLAIM: "preferred_username",
};
const COOLDOWN_MS = 400;

let dir: string;
let ca: TestCa;
let idp: JwksServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "taskplans-jwks-"));
  ca = makeCa(dir, "idp-ca");
  idp = await startJwksServer(ca, AUDIENCE);
});
afterAll(async () => {
  await idp?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** An access token as a Keycloak realm issues it for a service account, with the two mapped claims. */
const accessToken = (key: SigningKey, options: { kid?: string | null; alg?: string } = {}) =>
  idp.sign(
    key,
    {
      sub: "5b1e6a9e-54a1-4c2c-9c3e-2f7f7c1d9a10",
      typ: "Bearer",
      azp: "ci-agent",
      scope: "openid profile",
      preferred_username: "service-account-ci-agent",
      "https://taskplans.example/workspaces": ["ws-1"],
      "https://taskplans.example/kind": "agent",
    },
    options,
  );

async function startWith(env: Record<string, string>) {
  const { logger, lines } = capturingLogger();
  const app: RunningApp = await startApp(
    loadConfig({
      PLAN_GRPC_ADDRESS: "127.0.0.1:0",
      PLAN_HTTP_ADDRESS: "127.0.0.1:0",
      PLAN_DATABASE_URL: `sqlite:${join(dir, `${randomId("db")}.sqlite`)}`,
      PLAN_METRICS_ADDRESS: "",
      PLAN_RATE_LIMIT_WRITES: "0",
      PLAN_AUTH_AUDIENCE: AUDIENCE,
      PLAN_AUTH_JWKS_CA_FILE: ca.certFile,
      PLAN_AUTH_JWKS_COOLDOWN_MS: String(COOLDOWN_MS),
      ...CLAIM_NAMES,
      ...env,
    }),
    { logger },
  );
  return { app, lines };
}

/** Creates a task and a plan with `token`; resolves the task id. */
async function writeWith(app: RunningApp, token: string): Promise<string> {
  const client = connect(app.port, token);
  try {
    const taskId = randomId("task");
    await client.tasks.createTask({ taskId, workspaceId: "ws-1", title: "jwks" });
    await client.plans.createPlan({ taskId, content: "# Plan\n" });
    const [revision] = (await client.plans.listPlanRevisions({ taskId })).revisions;
    expect([revision?.authorKind, revision?.authorName]).toEqual([
      AuthorKind.AUTHOR_KIND_AGENT,
      "service-account-ci-agent",
    ]);
    return taskId;
  } finally {
    client.close();
  }
}

/** What a call with `token` is refused with (it must be refused). */
async function refusal(app: RunningApp, token: string, taskId: string) {
  const client = connect(app.port, token);
  try {
    return await rpcError(client.plans.updatePlan({ taskId, content: "- refused", mode: 2 }));
  } finally {
    client.close();
  }
}

async function expectUnchanged(app: RunningApp, token: string, taskId: string): Promise<void> {
  const client = connect(app.port, token);
  try {
    const { plan } = await client.plans.getPlan({ taskId });
    expect([plan?.content, plan?.version]).toEqual(["# Plan\n", 1]);
    expect((await client.plans.listPlanRevisions({ taskId })).revisions).toHaveLength(1);
  } finally {
    client.close();
  }
}

describe("JWKS (PLAN_AUTH_JWKS_URL)", () => {
  let app: RunningApp;
  let lines: string[];
  let first: SigningKey;

  beforeAll(async () => {
    first = await idp.newKey();
    await idp.publish([first]);
    ({ app, lines } = await startWith({ PLAN_AUTH_JWKS_URL: idp.jwksUrl, PLAN_AUTH_ISSUER: idp.issuer }));
  });
  afterAll(() => app.stop());

  it("accepts a token signed by a published key, with identity from the configured claims", async () => {
    await writeWith(app, await accessToken(first));
    expect(lines.join("")).toContain('"msg":"JWKS fetched"');
  });

  it("follows a key rotation without a restart: the new key is fetched on first sight, the retired one stops working", async () => {
    const second = await idp.newKey();
    await idp.publish([second]);
    await new Promise((resolve) => setTimeout(resolve, COOLDOWN_MS)); // past the last fetch's cooldown
    const before = idp.jwksRequests();
    const taskId = await writeWith(app, await accessToken(second));
    expect(idp.jwksRequests()).toBe(before + 1);
    await new Promise((resolve) => setTimeout(resolve, COOLDOWN_MS));
    const retired = await refusal(app, await accessToken(first), taskId);
    expect([retired.code, retired.reason]).toEqual([status.UNAUTHENTICATED, "TOKEN_KEY_UNKNOWN"]);
    await expectUnchanged(app, await accessToken(second), taskId);
  });

  it("makes at most one fetch per cooldown however many unknown kids arrive, refusing each with TOKEN_KEY_UNKNOWN and changing nothing", async () => {
    const current = await idp.newKey();
    await idp.publish([current]);
    await new Promise((resolve) => setTimeout(resolve, COOLDOWN_MS));
    const taskId = await writeWith(app, await accessToken(current));
    const forger = await idp.newKey(); // never published
    const before = idp.jwksRequests();
    const started = Date.now();
    // One after another, so that only the cooldown (not a shared in-flight fetch) can bound them.
    const refusals = [];
    for (let i = 0; i < 60; i++)
      refusals.push(await refusal(app, await accessToken(forger, { kid: randomId("kid") }), taskId));
    const elapsed = Date.now() - started;
    for (const refused of refusals)
      expect([refused.code, refused.reason]).toEqual([status.UNAUTHENTICATED, "TOKEN_KEY_UNKNOWN"]);
    expect(idp.jwksRequests() - before).toBeLessThanOrEqual(1 + Math.floor(elapsed / COOLDOWN_MS));
    expect(idp.jwksRequests() - before).toBeLessThan(10);
    await expectUnchanged(app, await accessToken(current), taskId);
  });

  it("keeps verifying with the cached keys while the provider is down; unknown keys fail TOKEN_KEY_UNKNOWN, never INTERNAL", async () => {
    const cached = await idp.newKey();
    await idp.publish([cached]);
    await new Promise((resolve) => setTimeout(resolve, COOLDOWN_MS));
    const taskId = await writeWith(app, await accessToken(cached));
    await idp.down();
    try {
      await new Promise((resolve) => setTimeout(resolve, COOLDOWN_MS));
      const refused = await refusal(app, await accessToken(await idp.newKey()), taskId);
      expect([refused.code, refused.reason]).toEqual([status.UNAUTHENTICATED, "TOKEN_KEY_UNKNOWN"]);
      await waitFor(
        "the failed fetch to be logged",
        async () => lines.join("").includes("JWKS fetch failed"),
        5_000,
      );
      await writeWith(app, await accessToken(cached));
      await expectUnchanged(app, await accessToken(cached), taskId);
    } finally {
      await idp.up();
    }
  });
});

describe("JWKS key selection: no kid, several keys of a type; an algorithm the key is not published for", () => {
  let app: RunningApp;
  let keys: SigningKey[];

  beforeAll(async () => {
    // A rotation overlap: two RSA keys and an EC key published at once.
    keys = [await idp.newKey("RS256"), await idp.newKey("RS256"), await idp.newKey("ES256")];
    await idp.publish(keys);
    ({ app } = await startWith({ PLAN_AUTH_JWKS_URL: idp.jwksUrl, PLAN_AUTH_ISSUER: idp.issuer }));
  });
  afterAll(() => app.stop());

  it("verifies a token without kid against each key of its type: either RSA key of the overlap, and the EC key", async () => {
    for (const key of keys) await writeWith(app, await accessToken(key, { kid: null }));
  });

  it("refuses a token without kid that no published key signed with TOKEN_INVALID", async () => {
    const taskId = await writeWith(app, await accessToken(keys[0] as SigningKey));
    const forged = await refusal(app, await accessToken(await idp.newKey("RS256"), { kid: null }), taskId);
    expect([forged.code, forged.reason]).toEqual([status.UNAUTHENTICATED, "TOKEN_INVALID"]);
    await expectUnchanged(app, await accessToken(keys[0] as SigningKey), taskId);
  });

  it("refuses a PS256 token signed by a key published for RS256 as TOKEN_INVALID ALGORITHM_NOT_ALLOWED, without fetching the key set", async () => {
    const rsa = keys[1] as SigningKey;
    const taskId = await writeWith(app, await accessToken(rsa));
    await new Promise((resolve) => setTimeout(resolve, COOLDOWN_MS)); // a fetch would be allowed
    const before = idp.jwksRequests();
    for (const kid of [rsa.kid, null]) {
      const refused = await refusal(app, await accessToken(rsa, { alg: "PS256", kid }), taskId);
      expect([refused.code, refused.reason, refused.metadata.cause]).toEqual([
        status.UNAUTHENTICATED,
        "TOKEN_INVALID",
        "ALGORITHM_NOT_ALLOWED",
      ]);
      expect(refused.message).toContain("algorithm");
    }
    expect(idp.jwksRequests()).toBe(before);
    await expectUnchanged(app, await accessToken(rsa), taskId);
  });
});

describe("JWKS that cannot be fetched at start, and OIDC discovery (PLAN_AUTH_OIDC_DISCOVERY)", () => {
  it("refuses every token with TOKEN_KEY_UNKNOWN and reports the plan and task services NOT_SERVING until the provider answers, then verifies and serves without a restart", async () => {
    const key = await idp.newKey();
    await idp.publish([key]);
    await idp.down();
    const { app } = await startWith({ PLAN_AUTH_JWKS_URL: idp.jwksUrl, PLAN_AUTH_ISSUER: idp.issuer });
    const health = healthClient(app.port);
    const statuses = async () =>
      Promise.all(
        ["", "taskplans.v1.PlanService", "taskplans.v1.TaskService"].map((name) => checkHealth(health, name)),
      );
    try {
      const refused = await refusal(app, await accessToken(key), "task-x");
      expect([refused.code, refused.reason]).toEqual([status.UNAUTHENTICATED, "TOKEN_KEY_UNKNOWN"]);
      expect(refused.message).toContain("could not be fetched");
      // The whole server ("": startup and liveness) is up; what needs a verified caller is not.
      expect(await statuses()).toEqual(["SERVING", "NOT_SERVING", "NOT_SERVING"]);
      await idp.up();
      await new Promise((resolve) => setTimeout(resolve, COOLDOWN_MS));
      await writeWith(app, await accessToken(key));
      expect(await statuses()).toEqual(["SERVING", "SERVING", "SERVING"]);
      await idp.down(); // keys once fetched stay in use: the provider going away changes nothing
      await new Promise((resolve) => setTimeout(resolve, COOLDOWN_MS));
      await refusal(app, await accessToken(await idp.newKey()), "task-x"); // an unknown kid: a failed fetch
      expect(await statuses()).toEqual(["SERVING", "SERVING", "SERVING"]);
    } finally {
      health.close();
      await app.stop();
      await idp.up().catch(() => undefined);
    }
  });

  it("finds the JWK Set through the issuer's discovery document", async () => {
    const key = await idp.newKey();
    await idp.publish([key]);
    const { app, lines } = await startWith({
      PLAN_AUTH_OIDC_DISCOVERY: "true",
      PLAN_AUTH_ISSUER: idp.issuer,
    });
    try {
      await writeWith(app, await accessToken(key));
      expect(lines.join("")).toContain(`"url":"${idp.jwksUrl}"`);
    } finally {
      await app.stop();
    }
  });

  it.each([
    [{ PLAN_AUTH_JWKS_URL: "http://idp/jwks" }, "PLAN_AUTH_JWKS_URL must be an https:// URL"],
    [{ PLAN_AUTH_OIDC_DISCOVERY: "true" }, "PLAN_AUTH_OIDC_DISCOVERY needs PLAN_AUTH_ISSUER"],
    [
      { PLAN_AUTH_JWKS_URL: "https://idp/jwks", PLAN_AUTH_JWT_SECRET: "x".repeat(32) },
      "not PLAN_AUTH_JWT_SECRET and PLAN_AUTH_JWKS_URL",
    ],
  ])("refuses %j at start", (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe("a JWK Set answer cut off mid-body or trickled (PLAN_AUTH_JWKS_TIMEOUT_MS)", () => {
  const TIMEOUT_MS = 1_000;
  let app: RunningApp;
  let lines: string[];
  let current: SigningKey;
  let taskId: string;

  beforeAll(async () => {
    current = await idp.newKey();
    await idp.publish([current]);
    ({ app, lines } = await startWith({
      PLAN_AUTH_JWKS_URL: idp.jwksUrl,
      PLAN_AUTH_ISSUER: idp.issuer,
      PLAN_AUTH_JWKS_TIMEOUT_MS: String(TIMEOUT_MS),
      PLAN_METRICS_ADDRESS: "127.0.0.1:0",
    }));
    taskId = await writeWith(app, await accessToken(current));
  });
  afterAll(() => app.stop());

  const read = async (token: string, timeoutMs: number) => {
    const client = connect(app.port, token);
    try {
      return await client.plans.getPlan({ taskId }, { timeoutMs });
    } finally {
      client.close();
    }
  };
  const failedFetches = async () => {
    const body = await (await fetch(`http://127.0.0.1:${app.metricsPort}/metrics`)).text();
    return Number(/^taskplans_jwks_fetches_total\{outcome="failed"\} (\d+)$/m.exec(body)?.[1] ?? 0);
  };

  it.each([
    ["cut-off", "closed the connection before the body ended"],
    // The time left of the fetch's deadline when it starts: TIMEOUT_MS, or a few ms less under load.
    ["trickle", "did not send its document within"],
  ] as const)(
    "%s: the fetch fails within the timeout (the call is refused, not left waiting), is logged and counted, and the next fetch verifies the new key",
    async (fault, logged) => {
      const next = await idp.newKey();
      await idp.publish([current, next]);
      idp.misbehaveOnce(fault);
      await new Promise((resolve) => setTimeout(resolve, COOLDOWN_MS)); // past the last fetch's cooldown
      const failedBefore = await failedFetches();
      const started = Date.now();
      // Before the fix the fetch never settled (cut-off) or lasted the whole trickle (about 40 s), and
      // this call ran into its own deadline.
      const refused = await rpcError(read(await accessToken(next), 4 * TIMEOUT_MS));
      expect([refused.code, refused.reason]).toEqual([status.UNAUTHENTICATED, "TOKEN_KEY_UNKNOWN"]);
      expect((await read(await accessToken(current), 4 * TIMEOUT_MS)).plan?.version).toBe(1); // cached key
      const token = await accessToken(next);
      await waitFor(
        "the new key to verify",
        () =>
          read(token, 4 * TIMEOUT_MS).then(
            () => true,
            () => false,
          ),
        10_000,
      );
      const recoveryMs = Date.now() - started;
      process.stderr.write(
        `JWKS ${fault}: ${recoveryMs} ms from the failed fetch to the next verified call (cooldown ${COOLDOWN_MS} ms, timeout ${TIMEOUT_MS} ms)\n`,
      );
      expect(lines.some((line) => line.includes("JWKS fetch failed") && line.includes(logged))).toBe(true);
      expect(await failedFetches()).toBe(failedBefore + 1);
      current = next;
    },
  );
});
