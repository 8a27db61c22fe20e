import { Server, ServerCredentials } from "@grpc/grpc-js";
import { ReflectionService } from "@grpc/reflection";
import type { HealthImplementation } from "grpc-health-check";
import { ListenError } from "@taskplans/tls";
import { PlanServiceService, type PlanServiceServer } from "@taskplans/contract";
import { TaskServiceService, type TaskServiceServer } from "@taskplans/contract";
import { reflectionPackage, serviceSchema } from "./descriptors";
import { receivingRaw, type RawServer } from "./wire/received-request";

/** Services whose health is reported (plus "" for the whole server). */
export const SERVICE_NAMES = ["", "taskplans.v1.PlanService", "taskplans.v1.TaskService"] as const;

// Plan limit (256 KiB) of content plus headroom for the other fields and escaping.
export const MAX_MESSAGE_BYTES = 1024 * 1024;

/** The services as the gRPC port serves them (the HTTP listener serves the same handlers: src/http/). */
export function rawDefinitions() {
  return {
    plans: receivingRaw(PlanServiceService, serviceSchema("taskplans.v1.PlanService")),
    tasks: receivingRaw(TaskServiceService, serviceSchema("taskplans.v1.TaskService")),
  };
}

/** A gRPC server with our services, grpc.health.v1 and server reflection (for grpcurl and ghz). */
export function buildGrpcServer(
  services: { plans: RawServer<PlanServiceServer>; tasks: RawServer<TaskServiceServer> },
  health: HealthImplementation,
  connections: {
    maxConnectionAgeMs: number;
    maxConnectionAgeGraceMs: number;
    keepaliveTimeMs: number;
    maxConcurrentStreams: number;
  },
): Server {
  const server = new Server({
    // Larger requests fail with RESOURCE_EXHAUSTED before they reach a handler.
    "grpc.max_receive_message_length": MAX_MESSAGE_BYTES,
    "grpc.max_send_message_length": MAX_MESSAGE_BYTES,
    // Close connections after a while so that clients spread over new replicas (gRPC pins a
    // connection to one pod), letting in-flight calls finish first.
    "grpc.max_connection_age_ms": connections.maxConnectionAgeMs,
    "grpc.max_connection_age_grace_ms": connections.maxConnectionAgeGraceMs,
    // Detect dead peers behind load balancers; accept client pings every 10 s at most.
    "grpc.keepalive_time_ms": connections.keepaliveTimeMs,
    "grpc.keepalive_timeout_ms": 20_000,
    "grpc.http2.min_ping_interval_without_data_ms": 10_000,
    // Streams one connection may hold open: each WatchPlan stream may keep a message its client has
    // not read (watch-buffers.ts), so what one connection can pin is bounded by this.
    "grpc.max_concurrent_streams": connections.maxConcurrentStreams,
  });
  // Handlers receive the raw bytes and decode them inside their own error handling (see unary.ts).
  const definitions = rawDefinitions();
  server.addService(definitions.plans, services.plans);
  server.addService(definitions.tasks, services.tasks);
  health.addToServer(server);
  new ReflectionService(reflectionPackage()).addToServer(server);
  return server;
}

/**
 * Binds `address` (PLAN_GRPC_ADDRESS: host:port, port 0 picks a free one) and resolves the bound
 * port (plaintext unless `credentials` say otherwise); rejects with a ListenError naming the setting when the address cannot be bound.
 */
export function bind(
  server: Server,
  address: string,
  credentials: ServerCredentials = ServerCredentials.createInsecure(),
): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(address, credentials, (error, port) =>
      error ? reject(new ListenError("PLAN_GRPC_ADDRESS", address, error)) : resolve(port),
    );
  });
}
