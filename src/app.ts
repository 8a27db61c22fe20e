import { ChecklistThread } from "./threads/checklist-thread";
import { randomUUID } from "node:crypto";
import { HealthImplementation } from "grpc-health-check";
import type { Logger } from "pino";
import { type JwksFetchOutcome, jwksKeySet } from "./auth/jwks-key-set";
import { createTokenVerifier, type TokenVerifier } from "./auth/token-verifier";
import type { AuthConfig, Config, TlsFilesConfig } from "./config/config";
import { readSettingFile, watchTlsFiles } from "@taskplans/tls";
import { startChangeFeed } from "./composition/change-feed";
import { startHttpDoors } from "./composition/http-doors";
import { openStore } from "./composition/open-store";
import { authenticator } from "./grpc/authenticate";
import { startHealthMonitor } from "./grpc/health/health-monitor";
import { planHandlers } from "./grpc/plan-handlers";
import { bind, buildGrpcServer, rawDefinitions } from "./grpc/server";
import { es } from "@taskplans/contract";
import { ServingConditions } from "./grpc/health/serving-conditions";
import { serverCredentials } from "./grpc/tls-credentials";
import { taskHandlers } from "./grpc/task-handlers";
import { TaskTransfer } from "./plans/transfer/task-transfer";
import { WatchBuffers } from "./grpc/watch/watch-buffers";
import { ExpensiveCalls } from "./grpc/limits/expensive-calls";
import { writeBudget } from "./grpc/limits/write-budget";
import { writeRateLimit } from "./grpc/limits/write-rate-limit";
import { InProcessTaskLock } from "./locking/in-process-task-lock";
import { RedlockTaskLock } from "./locking/redlock-task-lock";
import type { TaskLock } from "./plans/ports/task-lock";
import { createLogger } from "./logger";
import { createMetrics, edgeCounters, watchGauges, expensiveCallsGauge } from "./observability/metrics";
import { tracedLock, tracedMetrics } from "./observability/traced-ports";
import { startTracingSdk } from "./observability/tracing-sdk";
import { changesListener, type EventSink, eventsListener } from "./plans/pipeline/events";
import { LogEventSink } from "./plans/pipeline/log-event-sink";
import { ChangeQueries } from "./plans/change-queries";
import { PlanQueries } from "./plans/plan-queries";
import { PlanService } from "./plans/plan-service";
import { TaskService } from "./plans/task-service";
import { WritePipeline } from "./plans/pipeline/write-pipeline";
import { WatchService } from "./watch/watch-service";

/** A started service. */
export interface RunningApp {
  /** The bound gRPC port. */
  readonly port: number;
  /** The bound /metrics port (null when disabled). */
  readonly metricsPort: number | null;
  /** The HTTP listener's bound port (PLAN_HTTP_ADDRESS); null when it is off. */
  readonly httpPort: number | null;
  /** Drains in-flight calls (up to the drain time), then closes the lock and the database. */
  stop(): Promise<void>;
}

/** Replaceable parts (tests observe events; a test may hold the lock open to force overlaps). */
export interface AppOverrides {
  readonly logger?: Logger;
  readonly events?: EventSink;
  readonly lock?: TaskLock;
  readonly clock?: () => Date;
}

/** The composition root: builds every adapter from config, wires the services and starts serving. */
export async function startApp(config: Config, overrides: AppOverrides = {}): Promise<RunningApp> {
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const { metrics: plainMetrics, registry } = createMetrics();
  const edge = edgeCounters(registry);
  // Certificates first: unusable TLS files (expired ones included) fail the start before anything is opened.
  const tlsFiles = (files: TlsFilesConfig) =>
    watchTlsFiles(files, config.tlsReloadIntervalMs, logger, (outcome) => edge.tlsReload(outcome));
  const grpcTls = config.grpcTls ? tlsFiles(config.grpcTls) : null;
  const metricsTls = config.metricsTls ? tlsFiles(config.metricsTls) : null;
  // Every written content's checklist is counted here, large ones on a thread of their own.
  const checklist = new ChecklistThread();
  const { store, dialect, ping } = await openStore(config, logger, registry, checklist);
  // Tracing off: no SDK, no decorators, nothing per call.
  const traces = config.tracing ? startTracingSdk(config.tracing) : null;
  const tracer = traces?.tracing.tracer ?? null;
  const plainLock =
    overrides.lock ??
    (config.redis ? await RedlockTaskLock.connect(config.redis, logger) : new InProcessTaskLock());
  const lock = tracer ? tracedLock(plainLock, tracer) : plainLock;
  const clock = overrides.clock ?? (() => new Date());
  const metrics = tracer ? tracedMetrics(plainMetrics, tracer, dialect) : plainMetrics;
  const { hub, bus, pruner } = startChangeFeed(config, { store, logger, clock, dialect, metrics, tracer });
  const writes = new WritePipeline({
    store,
    lock,
    listeners: [
      pruner,
      changesListener(bus),
      overrides.events ? eventsListener(overrides.events) : new LogEventSink(logger),
    ],
    settings: {
      coalesceWindowMs: config.coalesceWindowMs,
      lockWaitMs: config.lockWaitMs,
      historyBudget: { maxRevisions: config.historyMaxRevisions, maxBytes: config.historyMaxBytes },
    },
    clock,
    newId: randomUUID,
    checklist,
    logger,
    metrics,
  });
  const health = new HealthImplementation();
  // With JWKS, the plan and task services are NOT_SERVING until the first key set is fetched.
  const serving = new ServingConditions(health, {
    database: true,
    identity: !config.auth?.jwks,
    running: true,
  });
  const verifier = config.auth
    ? verifierOf(config.auth, logger, (outcome) => {
        edge.jwksFetch(outcome);
        if (outcome === "ok") serving.set("identity", true);
      })
    : null;
  if (!verifier) logger.warn("auth is off: every task is reachable and request authors are trusted");
  const deps = {
    tracing: traces?.tracing ?? null,
    authenticate: authenticator(verifier),
    logger,
    metrics,
    slowCallMs: config.slowCallMs,
    writeRateLimit: writeRateLimit(config.rateLimitWrites, config.rateLimitWindowMs),
    writeBudget: writeBudget(config.writeBudgetBytes, config.writeBudgetWindowMs),
    expensiveCalls: new ExpensiveCalls(config.expensiveCallsPerCaller, config.expensiveCallsPerReplica),
  };
  expensiveCallsGauge(registry, () => deps.expensiveCalls.inFlight);
  const watchBuffers = new WatchBuffers(config.changes.watchBufferBytes, config.changes.maxStreams);
  watchGauges(registry, {
    streams: () => hub.watchCount,
    queuedBytes: () => watchBuffers.queuedBytes,
    writingBytes: () => watchBuffers.writingBytes,
    readingBytes: () => watchBuffers.readingBytes,
  });
  const services = {
    plans: planHandlers(
      new PlanService(writes),
      new PlanQueries(store),
      new ChangeQueries(store),
      new WatchService(store, hub, clock),
      {
        ...deps,
        streamBuffer: { messages: config.changes.streamBuffer, bytes: config.changes.streamBufferBytes },
        watchBuffers,
      },
    ),
    tasks: taskHandlers(
      new TaskService(store, writes, clock, randomUUID),
      new TaskTransfer(
        store,
        new Set(config.operatorSubjects),
        { maxRevisions: config.historyMaxRevisions, maxBytes: config.historyMaxBytes },
        writes,
        checklist,
        clock,
      ),
      deps,
    ),
  };
  const server = buildGrpcServer(services, health, {
    maxConnectionAgeMs: config.maxConnectionAgeMs,
    maxConnectionAgeGraceMs: config.shutdownDrainMs,
    keepaliveTimeMs: config.keepaliveTimeMs,
    maxConcurrentStreams: config.maxConcurrentStreams,
  });
  const port = await bind(server, config.grpcAddress, serverCredentials(grpcTls));
  const definitions = rawDefinitions();
  const doors = await startHttpDoors(config, {
    registry,
    logger,
    verifier,
    services: [
      { service: es.PlanService, definition: definitions.plans, handlers: services.plans },
      { service: es.TaskService, definition: definitions.tasks, handlers: services.tasks },
    ],
    grpcTls,
    metricsTls,
  });
  const monitor = startHealthMonitor(ping, serving, config.healthIntervalMs, logger);
  logger.info(
    {
      port,
      httpPort: doors.httpPort,
      database: dialect,
      lock: config.redis ? "redlock" : "in-process",
      auth: verifier !== null,
      tls: grpcTls ? (grpcTls.current().clientCa ? "mutual" : "server") : "off",
      tracing: config.tracing ? config.tracing.protocol : "off",
    },
    "serving",
  );

  let stopping: Promise<void> | null = null;
  return {
    port,
    httpPort: doors.httpPort,
    metricsPort: doors.metricsPort,
    stop() {
      stopping ??= (async () => {
        monitor.stop();
        pruner.stop();
        doors.stopGuards();
        // Streams never end on their own: end them (UNAVAILABLE WATCH_DRAINING, resume elsewhere)
        // so that draining waits only for unary calls.
        hub.close();
        await Promise.all([drain(server, config.shutdownDrainMs), doors.closeDoor(config.shutdownDrainMs)]);
        await bus.close();
        await doors.closeMetrics();
        grpcTls?.stop();
        metricsTls?.stop();
        await lock.close();
        await store.close();
        await checklist.close();
        await traces?.shutdown(); // exports the spans still batched
        logger.info("stopped");
      })();
      return stopping;
    },
  };
}

// Stop accepting calls, let in-flight ones finish for up to `drainMs`, then cancel the rest (their
// callers see UNAVAILABLE/CANCELLED; nothing half-written survives thanks to transactions).
function drain(server: import("@grpc/grpc-js").Server, drainMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.forceShutdown(), drainMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

// With JWKS, the key set is fetched at once (a provider that is down does not stop the start: calls
// fail UNAUTHENTICATED TOKEN_KEY_UNKNOWN until a fetch succeeds); `onFetch` hears every outcome.
function verifierOf(
  auth: AuthConfig,
  logger: Logger,
  onFetch: (outcome: JwksFetchOutcome) => void,
): TokenVerifier {
  if (!auth.jwks) return createTokenVerifier(auth);
  const { caFile } = auth.jwks;
  const ca = caFile ? readSettingFile({ path: caFile, setting: "PLAN_AUTH_JWKS_CA_FILE" }) : null;
  const keys = jwksKeySet({ ...auth.jwks, ca }, logger, onFetch);
  void keys.prefetch();
  return createTokenVerifier(auth, (header) => keys.keysFor(header));
}
