/**
 * The ceiling of `npm run bench:overhead`: the raw baseline's append (bench/overhead-raw.ts, the
 * service's statements with mysql2 under a Redlock) behind a bare grpc-js server of the same
 * PlanService. No validation, no TypeORM, no service code: what any Node gRPC service sending these
 * statements would cost at least, measured through the same client as the service. Prints its port,
 * serves UpdatePlan until SIGTERM.
 *
 *   node dist-bench/bench/overhead/overhead-ceiling.js '{"databaseUrl":"mysql://...","redisUrls":[...]}'
 */
import { Server, ServerCredentials, status, type UntypedHandleCall } from "@grpc/grpc-js";
import { PlanServiceService, type UpdatePlanRequest, type WritePlanResponse } from "@taskplans/contract";
import { openRaw, type RawJob } from "./overhead-raw";

const dateOf = (value: unknown) => (value === null ? undefined : new Date(Number(value)));

function main(job: Pick<RawJob, "databaseUrl" | "redisUrls">): void {
  const raw = openRaw(job);
  const server = new Server();
  const unimplemented = (_: unknown, callback: (error: { code: number }) => void) =>
    callback({ code: status.UNIMPLEMENTED });
  const handlers: Record<string, UntypedHandleCall> = {};
  for (const name of Object.keys(PlanServiceService)) handlers[name] = unimplemented;
  const updatePlan = (
    call: { request: UpdatePlanRequest },
    callback: (error: Error | null, response?: WritePlanResponse) => void,
  ) => {
    raw.append(call.request.taskId, call.request.content).then(
      ({ plan, revision }) =>
        callback(null, {
          plan: {
            taskId: String(plan.taskId),
            title: String(plan.title),
            content: "",
            contentBytes: Number(plan.contentBytes),
            contentChars: Number(plan.contentChars),
            version: Number(plan.version),
            createdBy: String(plan.createdBy),
            createdAt: dateOf(plan.createdAt),
            updatedAt: dateOf(plan.updatedAt),
            latestRevisionNumber: Number(plan.latestRevisionNumber),
          },
          revision,
        }),
      (error: Error) => callback(error),
    );
  };
  handlers.updatePlan = updatePlan as UntypedHandleCall;
  server.addService(PlanServiceService, handlers);
  server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, port) => {
    if (error) throw error;
    process.stdout.write(`${port}\n`);
  });
  process.once("SIGTERM", () => server.tryShutdown(() => void raw.close().then(() => process.exit(0))));
}

main(JSON.parse(process.argv[2] ?? "{}") as Pick<RawJob, "databaseUrl" | "redisUrls">);
