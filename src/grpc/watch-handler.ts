import { type handleServerStreamingCall, status } from "@grpc/grpc-js";
import type { PlanChange, WatchPlanRequest } from "../../generated/ts/taskplans/v1/plan_service";
import { planErrors } from "../plans/errors";
import { isWellFormedId } from "../plans/validate";
import type { Subscription } from "../watch/change-hub";
import type { WatchMessage, WatchService } from "../watch/watch-service";
import { watchMessageBytes } from "./encode-change";
import { CORRUPT_CONTENT, toWireError } from "./error-mapping";
import type { ReceivedRequest } from "./received-request";
import { echoRequestId, type UnaryDeps } from "./unary";

/** What the WatchPlan handler needs besides the unary handlers' dependencies. */
export interface WatchDeps extends UnaryDeps {
  /** Messages one stream may have queued for its client before it ends WATCH_TOO_SLOW. */
  readonly streamBuffer: number;
}

/**
 * WatchPlan: request id, decoding, caller and error mapping as for unary calls (one log line when
 * the stream starts and one when it ends), then the watch. Writers never wait for a stream: a change
 * is queued on it, and a stream whose client lets `streamBuffer` messages pile up ends
 * RESOURCE_EXHAUSTED WATCH_TOO_SLOW after the messages already queued, with the version to resume after.
 */
export function watchPlanHandler(
  service: WatchService,
  deps: WatchDeps,
): handleServerStreamingCall<ReceivedRequest<WatchPlanRequest>, PlanChange | Buffer> {
  return (call) => {
    const requestId = echoRequestId(call);
    const started = performance.now();
    const log: { method: string; requestId: string; taskId?: string } = { method: "WatchPlan", requestId };
    let subscription: Subscription | null = null;
    let ended = false;
    let lastQueued: number | null = null;
    let withContent = false;

    const finish = (error: unknown) => {
      if (ended) return;
      ended = true;
      subscription?.cancel();
      const ms = Math.round(performance.now() - started);
      if (error === null) {
        deps.metrics.rpc("WatchPlan", "CANCELLED", ms / 1000);
        deps.logger.info({ ...log, code: "CANCELLED", ms }, "stream ended by client");
        return;
      }
      const wire = toWireError(error, requestId);
      deps.metrics.rpc("WatchPlan", status[wire.code], ms / 1000);
      deps.metrics.rejection(wire.reason);
      const entry = { ...log, code: status[wire.code], reason: wire.reason, ms };
      if (wire.internal) deps.logger.error({ ...entry, err: error }, "stream failed unexpectedly");
      else if (wire.corrupt) deps.logger.error({ ...entry, ...wire.corrupt }, CORRUPT_CONTENT);
      else deps.logger.info(entry, "stream ended");
      call.emit("error", { code: wire.code, details: wire.details, metadata: wire.metadata });
    };
    const send = (message: WatchMessage) => {
      if (ended) return;
      if (call.writableLength >= deps.streamBuffer) {
        finish(planErrors.watchTooSlow(lastQueued));
        return;
      }
      call.write(watchMessageBytes(message, withContent));
      if (message.kind === "change") lastQueued = message.change.version;
      else lastQueued = message.plan?.version ?? null;
    };
    call.on("cancelled", () => finish(null));

    Promise.resolve()
      .then(async () => {
        const request = call.request.decode();
        if (isWellFormedId(request.taskId)) log.taskId = request.taskId;
        withContent = request.includeContent;
        const caller = await deps.authenticate(call.metadata);
        const watching = await service.watch(
          caller,
          { taskId: request.taskId, afterVersion: request.afterVersion, includeContent: withContent },
          { send, fail: finish },
        );
        if (ended) watching.cancel();
        else subscription = watching;
        deps.logger.info(log, "stream started");
      })
      .catch(finish);
  };
}
