import { isIP } from "node:net";
import { z } from "zod";
import { ConfigError, type TlsFilesConfig } from "@taskplans/tls";
import { type DatabaseNode, parseDatabaseUrl } from "./database-url";

/** Typed, validated service configuration (see docs/configuration.md). */
export interface Config {
  /** host:port the gRPC server listens on. */
  readonly grpcAddress: string;
  /** `sqlite:<path>` (embedded default) or `mysql://user:pass@host:port/db`. */
  readonly databaseUrl: string;
  /**
   * MySQL: the nodes PLAN_DATABASE_URL names (several: a Galera cluster, one talked to at a time;
   * `databaseUrl` then names the first); SQLite: none.
   */
  readonly databaseNodes: readonly DatabaseNode[];
  readonly databasePoolSize: number;
  /** Apply migrations at start-up (off when a Helm job migrates once per release). */
  readonly migrateOnStart: boolean;
  /**
   * The newest revision keeps no copy of its content while HEAD holds it (a coalescing append then
   * writes the plan once). Off until every replica runs a release that knows it (see docs/configuration.md).
   */
  readonly revisionContentAtHead: boolean;
  /** Longest wait for another process's migration run on the same database (MySQL advisory lock). */
  readonly migrationLockWaitMs: number;
  readonly coalesceWindowMs: number;
  readonly lockWaitMs: number;
  /**
   * Writes one caller may make per window, per replica; 0 means no limit. Unset: 100 with auth on
   * (per token subject), no limit with auth off (all local callers would share one address).
   */
  readonly rateLimitWrites: number;
  readonly rateLimitWindowMs: number;
  /**
   * Bytes of plan text one caller may store per window, per replica; 0 means no budget. Unset:
   * 64 MiB with auth on (per token subject: one task's default history budget per minute), none
   * with auth off (all local callers would share one address).
   */
  readonly writeBudgetBytes: number;
  readonly writeBudgetWindowMs: number;
  /**
   * Expensive calls (DiffPlanRevisions, GetPlanChanges, writes that ask to merge) one caller may
   * have in flight on one replica (default 4 with auth on, none with auth off), and the replica in
   * all (8; issue 54); 0 means no limit.
   */
  readonly expensiveCallsPerCaller: number;
  readonly expensiveCallsPerReplica: number;
  /** Per-task history budget; 0 means no limit. */
  readonly historyMaxRevisions: number;
  readonly historyMaxBytes: number;
  readonly shutdownDrainMs: number;
  readonly healthIntervalMs: number;
  readonly logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  /** host:port of the HTTP listener (Connect, gRPC-Web, the console: docs/http.md); null disables it. */
  readonly httpAddress: string | null;
  /** Browser origins (exact, e.g. https://editor.example.com) allowed to call the HTTP listener; empty: CORS off. */
  readonly httpCorsOrigins: readonly string[];
  /**
   * Host names the HTTP listener and /metrics answer besides their defaults (loopback names; bound
   * beyond loopback, IP literals and single-label names too): exact names, `.example.com` for a domain
   * and its subdomains, or `*` for any (docs/http.md, "Host and Origin").
   */
  readonly httpAllowedHosts: readonly string[];
  /** What the HTTP listener lets its clients hold: connections, and how long a request may take to arrive. */
  readonly httpLimits: HttpLimitsConfig;
  /** host:port of the Prometheus /metrics endpoint; null disables it. */
  readonly metricsAddress: string | null;
  /** Calls slower than this are logged at warn level. */
  readonly slowCallMs: number;
  /** Connections are closed (gracefully) after this age so clients rebalance across replicas. */
  readonly maxConnectionAgeMs: number;
  readonly keepaliveTimeMs: number;
  /** Calls (streams) one client connection may have open at once (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS). */
  readonly maxConcurrentStreams: number;
  /** Null: no auth (every task reachable, request authors trusted). */
  readonly auth: AuthConfig | null;
  /**
   * Token subjects that may import tasks (ImportTask; PLAN_AUTH_OPERATOR_SUBJECTS, comma-separated;
   * none by default). With auth off every caller may.
   */
  readonly operatorSubjects: readonly string[];
  /** Null: the in-process lock (one replica). Else Redlock over these independent Redis nodes. */
  readonly redis: RedisConfig | null;
  /** The change history and WatchPlan streams. */
  readonly changes: ChangesConfig;
  /** Null: plaintext gRPC. Else TLS (and mTLS with a client CA) from these files, reloaded when they change. */
  readonly grpcTls: TlsFilesConfig | null;
  /** Null: plaintext /metrics. Else HTTPS from these files. */
  readonly metricsTls: TlsFilesConfig | null;
  /** How often TLS files are read again to pick up a rotated certificate. */
  readonly tlsReloadIntervalMs: number;
  /** Null: no tracing (nothing runs for it). Else OpenTelemetry traces over OTLP. */
  readonly tracing: TracingConfig | null;
}

/**
 * Tracing is on when an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), unless OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none.
 * The exporter reads the other OTEL_* variables (headers, timeout, certificates) itself.
 */
export interface TracingConfig {
  readonly protocol: "grpc" | "http/protobuf";
  readonly serviceVersion: string;
}

/** PEM files of a TLS listener (@taskplans/tls); each path is named with its setting, for error messages. */
export type { TlsFilesConfig } from "@taskplans/tls";

/** The HTTP listener's bounds on what its clients can hold (docs/http.md "Limits"). */
export interface HttpLimitsConfig {
  /** Connections open at once; a connection past it is closed as soon as it is accepted. */
  readonly maxConnections: number;
  /** A request's headers must arrive within this time of its first byte, else 408 and the connection closed. */
  readonly headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this time, else 408 and the connection closed. */
  readonly bodyTimeoutMs: number;
}

/** Retention of the change history and delivery of WatchPlan streams. */
export interface ChangesConfig {
  /** Changes older than this are pruned (0 keeps them whatever their age). */
  readonly maxAgeMs: number;
  /** Changes of each task's newest this-many versions are kept (0 keeps all). */
  readonly maxVersions: number;
  readonly pruneIntervalMs: number;
  /** Changes one stream may have waiting for its client before it ends RESOURCE_EXHAUSTED WATCH_TOO_SLOW. */
  readonly streamBuffer: number;
  /** Bytes one stream may have waiting for its client, likewise. */
  readonly streamBufferBytes: number;
  /**
   * Bytes all streams of this replica may hold for their clients: queued, and being written in the
   * form its door sends (each message counted once).
   */
  readonly watchBufferBytes: number;
  /** WatchPlan streams this replica serves at once (both doors); one more is refused WATCH_STREAMS_EXHAUSTED. */
  readonly maxStreams: number;
  /** How often watched tasks are checked for changes whose notification was lost. */
  readonly pollIntervalMs: number;
  /**
   * Redis URLs change notifications are published on and subscribed to (every replica must name the
   * same): PLAN_CHANGES_REDIS_URL, else the lock's nodes; empty: notifications stay in-process.
   */
  readonly notifyUrls: readonly string[];
}

/** The distributed per-task lock. */
export interface RedisConfig {
  readonly urls: readonly string[];
  readonly keyPrefix: string;
  /** Lease of a lock; extended while held. */
  readonly leaseMs: number;
  /** Pause between acquire attempts while another replica holds the lock. */
  readonly retryDelayMs: number;
  /** Most consecutive local writes one replica runs under one Redis lease before yielding. */
  readonly maxBatch: number;
}

/** Bearer-token verification settings. */
export interface AuthConfig {
  readonly secret: string | null;
  readonly publicKeyPem: string | null;
  readonly issuer: string | null;
  readonly audience: string | null;
  /** Allowed difference between the issuer's clock and ours, for `exp`, `nbf` and `iat`. */
  readonly clockSkewMs: number;
  /** Null: a secret or a public key. Else the identity provider's published keys. */
  readonly jwks: JwksConfig | null;
  /** Names of the claims identity is read from. */
  readonly claims: { readonly workspaces: string; readonly kind: string; readonly name: string };
}

/** The identity provider's JWK Set: at `url`, or named by the issuer's OIDC discovery document. */
export interface JwksConfig {
  readonly url: string | null;
  readonly discoveryIssuer: string | null;
  /** A PEM CA bundle trusted for the fetches besides the system's (PLAN_AUTH_JWKS_CA_FILE). */
  readonly caFile: string | null;
  readonly refreshMs: number;
  readonly cooldownMs: number;
  readonly timeoutMs: number;
}

const integer = (min: number, fallback: number) => z.coerce.number().int().min(min).default(fallback);
const optionalText = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value === "" ? null : value));

const schema = z.object({
  PLAN_GRPC_ADDRESS: z
    .string()
    .regex(/^(\[[0-9a-fA-F:]+\]|[^\s:]+):\d{1,5}$/, "must be host:port")
    .default("127.0.0.1:50051"),
  PLAN_DATABASE_URL: z
    .string()
    .regex(
      /^(sqlite:.+|mysql:\/\/.+|mariadb:\/\/.+)$/,
      "must be sqlite:<path> or mysql://user:pass@host:port/db",
    )
    .default("sqlite:./var/plans.sqlite"),
  PLAN_DATABASE_POOL_SIZE: integer(1, 10),
  PLAN_MIGRATE_ON_START: z.enum(["true", "false"]).default("true"),
  PLAN_REVISION_CONTENT_AT_HEAD: z.enum(["true", "false"]).default("false"),
  PLAN_MIGRATION_LOCK_WAIT_MS: integer(1, 60_000),
  PLAN_COALESCE_WINDOW_MS: integer(0, 300_000),
  PLAN_LOCK_WAIT_MS: integer(1, 10_000),
  // Its default depends on auth (see loadConfig), so unset and empty stay apart from 0 ("no limit").
  PLAN_RATE_LIMIT_WRITES: z.preprocess(
    (value) => (value === undefined || (typeof value === "string" && value.trim() === "") ? null : value),
    z.coerce.number().int().min(0).nullable(),
  ),
  PLAN_RATE_LIMIT_WINDOW_MS: integer(1, 1_000),
  // Like PLAN_RATE_LIMIT_WRITES: its default depends on auth, so unset stays apart from 0.
  PLAN_WRITE_BUDGET_BYTES: z.preprocess(
    (value) => (value === undefined || (typeof value === "string" && value.trim() === "") ? null : value),
    z.coerce.number().int().min(0).nullable(),
  ),
  PLAN_WRITE_BUDGET_WINDOW_MS: integer(1, 60_000),
  PLAN_EXPENSIVE_CALLS_PER_CALLER: z.preprocess(
    (value) => (value === undefined || (typeof value === "string" && value.trim() === "") ? null : value),
    z.coerce.number().int().min(0).nullable(),
  ),
  PLAN_EXPENSIVE_CALLS_PER_REPLICA: integer(0, 8),
  PLAN_HISTORY_MAX_REVISIONS: integer(0, 10_000),
  PLAN_HISTORY_MAX_BYTES: integer(0, 64 * 1024 * 1024),
  PLAN_SHUTDOWN_DRAIN_MS: integer(0, 10_000),
  PLAN_HEALTH_INTERVAL_MS: integer(100, 5_000),
  PLAN_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  PLAN_HTTP_ADDRESS: z
    .string()
    .regex(/^((\[[0-9a-fA-F:]+\]|[^\s:]+):\d{1,5})?$/, "must be host:port, or empty to disable")
    .default("127.0.0.1:8080"),
  PLAN_HTTP_CORS_ORIGINS: z
    .string()
    .default("")
    .transform((value) =>
      value
        .split(",")
        .map((origin) => origin.trim())
        .filter((origin) => origin !== ""),
    )
    .pipe(
      z.array(
        z
          .string()
          .regex(
            /^https?:\/\/[^\s/?#*]+$/,
            "each origin must be exact: scheme://host[:port], no path, no wildcard (CORS never answers *)",
          ),
      ),
    ),
  PLAN_HTTP_ALLOWED_HOSTS: z
    .string()
    .default("")
    .transform((value) =>
      value
        .split(",")
        .map((name) => name.trim())
        .filter((name) => name !== ""),
    )
    .pipe(
      z.array(
        z
          .string()
          .refine(
            (name) =>
              /^(\*|\.?[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?)$/.test(name) ||
              isIP(name.replace(/^\[(.*)\]$/, "$1")) === 6,
            "each entry must be a host name without scheme, port or path (name, .domain for it and its subdomains, or * for any)",
          ),
      ),
    ),
  PLAN_HTTP_MAX_CONNECTIONS: integer(1, 1_000),
  PLAN_HTTP_HEADERS_TIMEOUT_MS: integer(1_000, 10_000),
  PLAN_HTTP_BODY_TIMEOUT_MS: integer(1_000, 30_000),
  PLAN_METRICS_ADDRESS: z
    .string()
    .regex(/^((\[[0-9a-fA-F:]+\]|[^\s:]+):\d{1,5})?$/, "must be host:port, or empty to disable")
    .default("127.0.0.1:9464"),
  PLAN_SLOW_CALL_MS: integer(1, 1_000),
  PLAN_GRPC_MAX_CONNECTION_AGE_MS: integer(1_000, 30 * 60 * 1000),
  PLAN_GRPC_KEEPALIVE_TIME_MS: integer(1_000, 60_000),
  PLAN_GRPC_MAX_CONCURRENT_STREAMS: integer(1, 100),
  PLAN_AUTH_JWT_SECRET: optionalText.refine((value) => value === null || value.length >= 32, {
    message: "must be at least 32 characters",
  }),
  PLAN_AUTH_JWT_PUBLIC_KEY: optionalText,
  PLAN_AUTH_ISSUER: optionalText,
  PLAN_AUTH_AUDIENCE: optionalText,
  // Beyond 10 minutes a skew would mostly extend the life of expired tokens.
  PLAN_AUTH_CLOCK_SKEW_MS: integer(0, 60_000).pipe(z.number().max(600_000)),
  PLAN_AUTH_JWKS_URL: optionalText.refine((value) => value === null || /^https:\/\/\S+$/.test(value), {
    message: "must be an https:// URL",
  }),
  PLAN_AUTH_OIDC_DISCOVERY: z.enum(["true", "false"]).default("false"),
  PLAN_AUTH_JWKS_CA_FILE: optionalText,
  PLAN_AUTH_JWKS_REFRESH_MS: integer(1_000, 600_000),
  PLAN_AUTH_JWKS_COOLDOWN_MS: integer(100, 30_000),
  PLAN_AUTH_JWKS_TIMEOUT_MS: integer(100, 5_000),
  PLAN_AUTH_WORKSPACES_CLAIM: z.string().min(1).default("workspaces"),
  PLAN_AUTH_KIND_CLAIM: z.string().min(1).default("kind"),
  PLAN_AUTH_NAME_CLAIM: z.string().min(1).default("name"),
  PLAN_AUTH_OPERATOR_SUBJECTS: optionalText,
  PLAN_REDIS_URLS: optionalText.refine(
    (value) => value === null || value.split(",").every((url) => /^rediss?:\/\/[^\s,]+$/.test(url.trim())),
    { message: "must be a comma-separated list of redis:// URLs" },
  ),
  PLAN_REDIS_KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,64}$/, "must be 1-64 of [A-Za-z0-9_.:-]")
    .default("taskplans"),
  PLAN_LOCK_LEASE_MS: integer(500, 5_000),
  PLAN_LOCK_RETRY_DELAY_MS: integer(1, 50),
  PLAN_LOCK_MAX_BATCH: integer(1, 16),
  PLAN_CHANGES_MAX_AGE_MS: integer(0, 24 * 60 * 60 * 1000),
  PLAN_CHANGES_MAX_VERSIONS: integer(0, 500),
  PLAN_CHANGES_PRUNE_INTERVAL_MS: integer(100, 60_000),
  PLAN_WATCH_STREAM_BUFFER: integer(1, 256),
  // At least one message of the largest size (grpc/server.ts MAX_MESSAGE_BYTES) must fit a queue.
  PLAN_WATCH_STREAM_BUFFER_BYTES: integer(1024 * 1024, 4 * 1024 * 1024),
  PLAN_WATCH_BUFFER_BYTES: integer(1024 * 1024, 64 * 1024 * 1024),
  PLAN_WATCH_POLL_INTERVAL_MS: integer(100, 5_000),
  PLAN_WATCH_MAX_STREAMS: integer(1, 1_000),
  PLAN_GRPC_TLS_CERT_FILE: optionalText,
  PLAN_GRPC_TLS_KEY_FILE: optionalText,
  PLAN_GRPC_TLS_CLIENT_CA_FILE: optionalText,
  PLAN_METRICS_TLS_CERT_FILE: optionalText,
  PLAN_METRICS_TLS_KEY_FILE: optionalText,
  PLAN_TLS_RELOAD_INTERVAL_MS: integer(100, 10_000),
  PLAN_CHANGES_REDIS_URL: optionalText.refine(
    (value) => value === null || /^rediss?:\/\/[^\s,]+$/.test(value),
    {
      message: "must be a redis:// URL",
    },
  ),
});

/** The write budget with auth on when PLAN_WRITE_BUDGET_BYTES is unset (64 MiB). */
export const DEFAULT_WRITE_BUDGET_BYTES = 64 * 1024 * 1024;

/** Expensive calls one caller may have in flight on a replica with auth on (issue 54). */
const DEFAULT_EXPENSIVE_CALLS_PER_CALLER = 4;

/** The release, as package.json names it (the spans' service.version). */
const SERVICE_VERSION = "0.1.0";

/** Parses the environment once into a frozen Config, or throws ConfigError. */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join(".")} ${issue.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join("; ")}`);
  }
  const e = parsed.data;
  const discovery = e.PLAN_AUTH_OIDC_DISCOVERY === "true";
  const keySources = [
    e.PLAN_AUTH_JWT_SECRET && "PLAN_AUTH_JWT_SECRET",
    e.PLAN_AUTH_JWT_PUBLIC_KEY && "PLAN_AUTH_JWT_PUBLIC_KEY",
    e.PLAN_AUTH_JWKS_URL && "PLAN_AUTH_JWKS_URL",
    discovery && "PLAN_AUTH_OIDC_DISCOVERY",
  ].filter(Boolean);
  if (keySources.length > 1) {
    throw new ConfigError(
      `invalid configuration: set one of PLAN_AUTH_JWT_SECRET, PLAN_AUTH_JWT_PUBLIC_KEY, PLAN_AUTH_JWKS_URL and PLAN_AUTH_OIDC_DISCOVERY, not ${keySources.join(" and ")}`,
    );
  }
  if (discovery && !e.PLAN_AUTH_ISSUER?.startsWith("https://")) {
    throw new ConfigError(
      "invalid configuration: PLAN_AUTH_OIDC_DISCOVERY needs PLAN_AUTH_ISSUER, an https:// issuer URL",
    );
  }
  const grpcTls = tlsFiles("PLAN_GRPC_TLS", e.PLAN_GRPC_TLS_CERT_FILE, e.PLAN_GRPC_TLS_KEY_FILE, {
    setting: "PLAN_GRPC_TLS_CLIENT_CA_FILE",
    path: e.PLAN_GRPC_TLS_CLIENT_CA_FILE,
  });
  const metricsTls = tlsFiles("PLAN_METRICS_TLS", e.PLAN_METRICS_TLS_CERT_FILE, e.PLAN_METRICS_TLS_KEY_FILE);
  const database = parseDatabaseUrl(e.PLAN_DATABASE_URL);
  const lockUrls = e.PLAN_REDIS_URLS ? e.PLAN_REDIS_URLS.split(",").map((url) => url.trim()) : [];
  const authOn = keySources.length === 1;
  // node:http refuses a headers timeout longer than the request's.
  if (e.PLAN_HTTP_HEADERS_TIMEOUT_MS > e.PLAN_HTTP_BODY_TIMEOUT_MS) {
    throw new ConfigError(
      "invalid configuration: PLAN_HTTP_HEADERS_TIMEOUT_MS must not exceed PLAN_HTTP_BODY_TIMEOUT_MS (the headers are part of the request)",
    );
  }
  return Object.freeze({
    grpcAddress: e.PLAN_GRPC_ADDRESS,
    databaseUrl: database.url,
    databaseNodes: Object.freeze(database.nodes),
    databasePoolSize: e.PLAN_DATABASE_POOL_SIZE,
    migrateOnStart: e.PLAN_MIGRATE_ON_START === "true",
    revisionContentAtHead: e.PLAN_REVISION_CONTENT_AT_HEAD === "true",
    migrationLockWaitMs: e.PLAN_MIGRATION_LOCK_WAIT_MS,
    coalesceWindowMs: e.PLAN_COALESCE_WINDOW_MS,
    lockWaitMs: e.PLAN_LOCK_WAIT_MS,
    // With auth off every local caller shares one client address, so a default limit would throttle
    // one busy back end of the embedded default; an explicit value turns it on, keyed by address.
    rateLimitWrites: e.PLAN_RATE_LIMIT_WRITES ?? (authOn ? 100 : 0),
    rateLimitWindowMs: e.PLAN_RATE_LIMIT_WINDOW_MS,
    // Issue 40: the history budget bounds a task, not a caller. With auth on a subject may store
    // one task's default history budget (64 MiB) per minute; off with auth off, as the rate limit.
    writeBudgetBytes: e.PLAN_WRITE_BUDGET_BYTES ?? (authOn ? DEFAULT_WRITE_BUDGET_BYTES : 0),
    writeBudgetWindowMs: e.PLAN_WRITE_BUDGET_WINDOW_MS,
    // Per caller only where callers are told apart (auth on); with auth off every local caller is
    // one address, and the replica's limit alone holds the loop, as the rate limit is off there too.
    expensiveCallsPerCaller:
      e.PLAN_EXPENSIVE_CALLS_PER_CALLER ?? (authOn ? DEFAULT_EXPENSIVE_CALLS_PER_CALLER : 0),
    expensiveCallsPerReplica: e.PLAN_EXPENSIVE_CALLS_PER_REPLICA,
    historyMaxRevisions: e.PLAN_HISTORY_MAX_REVISIONS,
    historyMaxBytes: e.PLAN_HISTORY_MAX_BYTES,
    shutdownDrainMs: e.PLAN_SHUTDOWN_DRAIN_MS,
    healthIntervalMs: e.PLAN_HEALTH_INTERVAL_MS,
    logLevel: e.PLAN_LOG_LEVEL,
    httpAddress: e.PLAN_HTTP_ADDRESS === "" ? null : e.PLAN_HTTP_ADDRESS,
    httpCorsOrigins: e.PLAN_HTTP_CORS_ORIGINS,
    httpAllowedHosts: Object.freeze(e.PLAN_HTTP_ALLOWED_HOSTS),
    httpLimits: Object.freeze({
      maxConnections: e.PLAN_HTTP_MAX_CONNECTIONS,
      headersTimeoutMs: e.PLAN_HTTP_HEADERS_TIMEOUT_MS,
      bodyTimeoutMs: e.PLAN_HTTP_BODY_TIMEOUT_MS,
    }),
    metricsAddress: e.PLAN_METRICS_ADDRESS === "" ? null : e.PLAN_METRICS_ADDRESS,
    slowCallMs: e.PLAN_SLOW_CALL_MS,
    maxConnectionAgeMs: e.PLAN_GRPC_MAX_CONNECTION_AGE_MS,
    keepaliveTimeMs: e.PLAN_GRPC_KEEPALIVE_TIME_MS,
    maxConcurrentStreams: e.PLAN_GRPC_MAX_CONCURRENT_STREAMS,
    operatorSubjects: Object.freeze(
      (e.PLAN_AUTH_OPERATOR_SUBJECTS ?? "")
        .split(",")
        .map((subject) => subject.trim())
        .filter((subject) => subject !== ""),
    ),
    auth: authOn
      ? Object.freeze({
          secret: e.PLAN_AUTH_JWT_SECRET,
          publicKeyPem: e.PLAN_AUTH_JWT_PUBLIC_KEY,
          issuer: e.PLAN_AUTH_ISSUER,
          audience: e.PLAN_AUTH_AUDIENCE,
          clockSkewMs: e.PLAN_AUTH_CLOCK_SKEW_MS,
          jwks:
            e.PLAN_AUTH_JWKS_URL || discovery
              ? Object.freeze({
                  url: e.PLAN_AUTH_JWKS_URL,
                  discoveryIssuer: discovery ? e.PLAN_AUTH_ISSUER : null,
                  caFile: e.PLAN_AUTH_JWKS_CA_FILE,
                  refreshMs: e.PLAN_AUTH_JWKS_REFRESH_MS,
                  cooldownMs: e.PLAN_AUTH_JWKS_COOLDOWN_MS,
                  timeoutMs: e.PLAN_AUTH_JWKS_TIMEOUT_MS,
                })
              : null,
          claims: Object.freeze({
            workspaces: e.PLAN_AUTH_WORKSPACES_CLAIM,
            kind: e.PLAN_AUTH_KIND_CLAIM,
            name: e.PLAN_AUTH_NAME_CLAIM,
          }),
        })
      : null,
    redis: e.PLAN_REDIS_URLS
      ? Object.freeze({
          urls: Object.freeze(lockUrls),
          keyPrefix: e.PLAN_REDIS_KEY_PREFIX,
          leaseMs: e.PLAN_LOCK_LEASE_MS,
          retryDelayMs: e.PLAN_LOCK_RETRY_DELAY_MS,
          maxBatch: e.PLAN_LOCK_MAX_BATCH,
        })
      : null,
    changes: Object.freeze({
      maxAgeMs: e.PLAN_CHANGES_MAX_AGE_MS,
      maxVersions: e.PLAN_CHANGES_MAX_VERSIONS,
      pruneIntervalMs: e.PLAN_CHANGES_PRUNE_INTERVAL_MS,
      streamBuffer: e.PLAN_WATCH_STREAM_BUFFER,
      streamBufferBytes: e.PLAN_WATCH_STREAM_BUFFER_BYTES,
      watchBufferBytes: e.PLAN_WATCH_BUFFER_BYTES,
      maxStreams: e.PLAN_WATCH_MAX_STREAMS,
      pollIntervalMs: e.PLAN_WATCH_POLL_INTERVAL_MS,
      notifyUrls: Object.freeze(e.PLAN_CHANGES_REDIS_URL ? [e.PLAN_CHANGES_REDIS_URL] : lockUrls),
    }),
    grpcTls,
    metricsTls,
    tlsReloadIntervalMs: e.PLAN_TLS_RELOAD_INTERVAL_MS,
    tracing: tracingOf(env),
  });
}

// The standard OpenTelemetry variables, read as the SDKs of every language read them.
function tracingOf(env: Readonly<Record<string, string | undefined>>): TracingConfig | null {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const exporters = (env.OTEL_TRACES_EXPORTER || "otlp").split(",").map((name) => name.trim());
  if (!endpoint || env.OTEL_SDK_DISABLED === "true" || !exporters.includes("otlp")) return null;
  const protocol =
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || "http/protobuf";
  if (protocol !== "grpc" && protocol !== "http/protobuf") {
    throw new ConfigError(
      `invalid configuration: OTEL_EXPORTER_OTLP_PROTOCOL must be grpc or http/protobuf (got ${protocol})`,
    );
  }
  return Object.freeze({ protocol, serviceVersion: SERVICE_VERSION });
}

// A certificate and its key are set together or not at all; a client CA needs both.
function tlsFiles(
  prefix: string,
  cert: string | null,
  key: string | null,
  clientCa: { setting: string; path: string | null } = { setting: "", path: null },
): TlsFilesConfig | null {
  if ((cert === null) !== (key === null)) {
    throw new ConfigError(
      `invalid configuration: set both ${prefix}_CERT_FILE and ${prefix}_KEY_FILE, or neither`,
    );
  }
  if (cert === null || key === null) {
    if (clientCa.path === null) return null;
    throw new ConfigError(
      `invalid configuration: ${clientCa.setting} needs ${prefix}_CERT_FILE and ${prefix}_KEY_FILE (mTLS is TLS with client certificates)`,
    );
  }
  return Object.freeze({
    certFile: { path: cert, setting: `${prefix}_CERT_FILE` },
    keyFile: { path: key, setting: `${prefix}_KEY_FILE` },
    clientCaFile: clientCa.path === null ? null : { path: clientCa.path, setting: clientCa.setting },
  });
}
