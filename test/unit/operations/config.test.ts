import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../../src/config/config";
import { ConfigError } from "@taskplans/tls";

describe("loadConfig", () => {
  it("defaults to the embedded database on 127.0.0.1:50051 without auth", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      grpcAddress: "127.0.0.1:50051",
      databaseUrl: "sqlite:./var/plans.sqlite",
      coalesceWindowMs: 300_000,
      auth: null,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it("serves HTTP on 127.0.0.1:8080 by default, off when empty; CORS origins are exact and listed", () => {
    expect(loadConfig({}).httpAddress).toBe("127.0.0.1:8080");
    expect(loadConfig({ PLAN_HTTP_ADDRESS: "" }).httpAddress).toBeNull();
    expect(loadConfig({}).httpCorsOrigins).toEqual([]);
    expect(
      loadConfig({ PLAN_HTTP_CORS_ORIGINS: " https://a.example.com,http://localhost:5173 " }).httpCorsOrigins,
    ).toEqual(["https://a.example.com", "http://localhost:5173"]);
  });

  it.each([
    [{ PLAN_COALESCE_WINDOW_MS: "-1" }, "PLAN_COALESCE_WINDOW_MS"],
    [{ PLAN_LOCK_WAIT_MS: "soon" }, "PLAN_LOCK_WAIT_MS"],
    [{ PLAN_DATABASE_URL: "postgres://x" }, "PLAN_DATABASE_URL"],
    [{ PLAN_GRPC_ADDRESS: "50051" }, "PLAN_GRPC_ADDRESS"],
    [{ PLAN_AUTH_JWT_SECRET: "short" }, "PLAN_AUTH_JWT_SECRET"],
    [{ PLAN_REDIS_URLS: "http://a" }, "PLAN_REDIS_URLS"],
    [{ PLAN_REDIS_URLS: "redis://a", PLAN_LOCK_LEASE_MS: "10" }, "PLAN_LOCK_LEASE_MS"],
    [{ PLAN_LOG_LEVEL: "loud" }, "PLAN_LOG_LEVEL"],
    [{ PLAN_HTTP_ADDRESS: "8080" }, "PLAN_HTTP_ADDRESS"],
    [{ PLAN_HTTP_CORS_ORIGINS: "*" }, "PLAN_HTTP_CORS_ORIGINS"],
    [{ PLAN_HTTP_CORS_ORIGINS: "https://a.example.com, https://*.example.com" }, "PLAN_HTTP_CORS_ORIGINS"],
    [{ PLAN_HTTP_CORS_ORIGINS: "https://a.example.com/app" }, "PLAN_HTTP_CORS_ORIGINS"],
    [{ PLAN_HTTP_CORS_ORIGINS: "null" }, "PLAN_HTTP_CORS_ORIGINS"],
  ])("fails fast naming the variable: %j", (env, variable) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(variable);
  });

  it("turns auth on with a secret", () => {
    const config = loadConfig({ PLAN_AUTH_JWT_SECRET: "s".repeat(32), PLAN_AUTH_ISSUER: "iss" });
    expect(config.auth).toEqual({
      secret: "s".repeat(32),
      publicKeyPem: null,
      issuer: "iss",
      audience: null,
      clockSkewMs: 60_000,
      jwks: null,
      claims: { workspaces: "workspaces", kind: "kind", name: "name" },
    });
    expect(
      loadConfig({ PLAN_AUTH_JWT_SECRET: "s".repeat(32), PLAN_AUTH_CLOCK_SKEW_MS: "0" }).auth,
    ).toMatchObject({ clockSkewMs: 0 });
    expect(() => loadConfig({ PLAN_AUTH_CLOCK_SKEW_MS: "600001" })).toThrow("PLAN_AUTH_CLOCK_SKEW_MS");
  });

  it("limits writes by default only with auth on; set (auth on or off) the value counts, empty is unset", () => {
    const auth = { PLAN_AUTH_JWT_SECRET: "s".repeat(32) };
    expect(loadConfig({}).rateLimitWrites).toBe(0);
    expect(loadConfig({ PLAN_RATE_LIMIT_WRITES: "" }).rateLimitWrites).toBe(0);
    expect(loadConfig(auth).rateLimitWrites).toBe(100);
    expect(loadConfig({ ...auth, PLAN_RATE_LIMIT_WRITES: "" }).rateLimitWrites).toBe(100);
    expect(loadConfig({ PLAN_RATE_LIMIT_WRITES: "100" }).rateLimitWrites).toBe(100);
    expect(loadConfig({ ...auth, PLAN_RATE_LIMIT_WRITES: "0" }).rateLimitWrites).toBe(0);
    expect(() => loadConfig({ PLAN_RATE_LIMIT_WRITES: "many" })).toThrow("PLAN_RATE_LIMIT_WRITES");
  });

  it("budgets stored bytes per caller by default only with auth on (64 MiB a minute); set, the value counts", () => {
    const auth = { PLAN_AUTH_JWT_SECRET: "s".repeat(32) };
    const budget = (env: Record<string, string>) => {
      const config = loadConfig(env);
      return [config.writeBudgetBytes, config.writeBudgetWindowMs];
    };
    expect(budget({})).toEqual([0, 60_000]);
    expect(budget({ PLAN_WRITE_BUDGET_BYTES: "" })).toEqual([0, 60_000]);
    expect(budget(auth)).toEqual([64 * 1024 * 1024, 60_000]);
    expect(budget({ ...auth, PLAN_WRITE_BUDGET_BYTES: " " })).toEqual([64 * 1024 * 1024, 60_000]);
    expect(budget({ ...auth, PLAN_WRITE_BUDGET_BYTES: "0" })).toEqual([0, 60_000]);
    expect(budget({ PLAN_WRITE_BUDGET_BYTES: "1000", PLAN_WRITE_BUDGET_WINDOW_MS: "5000" })).toEqual([
      1000, 5000,
    ]);
    expect(() => loadConfig({ PLAN_WRITE_BUDGET_BYTES: "-1" })).toThrow("PLAN_WRITE_BUDGET_BYTES");
    expect(() => loadConfig({ PLAN_WRITE_BUDGET_WINDOW_MS: "0" })).toThrow("PLAN_WRITE_BUDGET_WINDOW_MS");
  });

  it("limits expensive calls to 4 per caller (with auth on) and 8 per replica by default; 0 is no limit", () => {
    const limits = (env: Record<string, string>) => {
      const config = loadConfig(env);
      return [config.expensiveCallsPerCaller, config.expensiveCallsPerReplica];
    };
    expect(limits({})).toEqual([0, 8]);
    expect(limits({ PLAN_AUTH_JWT_SECRET: "s".repeat(32) })).toEqual([4, 8]);
    expect(limits({ PLAN_EXPENSIVE_CALLS_PER_CALLER: "2" })).toEqual([2, 8]);
    expect(limits({ PLAN_EXPENSIVE_CALLS_PER_CALLER: "0", PLAN_EXPENSIVE_CALLS_PER_REPLICA: "0" })).toEqual([
      0, 0,
    ]);
    expect(() => loadConfig({ PLAN_EXPENSIVE_CALLS_PER_CALLER: "-1" })).toThrow(
      "PLAN_EXPENSIVE_CALLS_PER_CALLER",
    );
    expect(() => loadConfig({ PLAN_EXPENSIVE_CALLS_PER_REPLICA: "x" })).toThrow(
      "PLAN_EXPENSIVE_CALLS_PER_REPLICA",
    );
  });
});

describe("redis lock configuration", () => {
  it("switches to Redlock with one or more redis URLs", () => {
    const config = loadConfig({ PLAN_REDIS_URLS: "redis://a:6379, redis://b:6379,redis://c:6379" });
    expect(config.redis).toEqual({
      urls: ["redis://a:6379", "redis://b:6379", "redis://c:6379"],
      keyPrefix: "taskplans",
      leaseMs: 5000,
      retryDelayMs: 50,
      maxBatch: 16,
    });
    expect(loadConfig({}).redis).toBeNull();
  });

  it("every variable it reads has a row, with its default, in the configuration table (docs/configuration.md)", () => {
    const root = join(__dirname, "..", "..", "..");
    const source = readFileSync(join(root, "src", "config", "config.ts"), "utf8");
    const variables = [...new Set(source.match(/PLAN_[A-Z_]+(?=:)/g))];
    const section = readFileSync(join(root, "docs", "configuration.md"), "utf8");
    const rows = section.split("\n").filter((line) => line.startsWith("| `PLAN_"));
    expect(variables.length).toBeGreaterThan(20);
    for (const variable of variables)
      expect([variable, rows.some((row) => row.includes(`\`${variable}\``))]).toEqual([variable, true]);
    // The documented defaults are the ones loadConfig applies (Redis set, so its settings count too).
    const documented: Record<string, string> = { PLAN_REDIS_URLS: "redis://a:6379" };
    for (const row of rows) {
      const [, name, fallback] = row.split("|").map((cell) => cell.trim());
      const value = /^`(.*)`$/.exec(fallback ?? "")?.[1];
      if (value !== undefined && name && !name.includes("/")) documented[name.replace(/`/g, "")] = value;
    }
    expect(Object.keys(documented).length).toBeGreaterThan(15);
    expect(loadConfig(documented)).toEqual(loadConfig({ PLAN_REDIS_URLS: "redis://a:6379" }));
  });
});

describe("the release the spans name", () => {
  it("is package.json's version (service.version), so the two cannot drift", () => {
    const { version } = JSON.parse(readFileSync(join(__dirname, "../../../package.json"), "utf8")) as {
      version: string;
    };
    const config = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" });
    expect(config.tracing?.serviceVersion).toBe(version);
  });
});
