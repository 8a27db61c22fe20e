import type { handleServerStreamingCall } from "@grpc/grpc-js";
import type { PlanChange, WatchPlanRequest } from "../../generated/ts/taskplans/v1/plan_service";
import { planErrors } from "../plans/errors";
import type { Subscription } from "../watch/change-hub";
import type { WatchMessage, WatchService } from "../watch/watch-service";
import { watchMessageBytes } from "./encode-change";
import type { ReceivedRequest } from "./received-request";
import { CallScope } from "./call-scope";
import type { UnaryDeps } from "./unary";

/** What the WatchPlan handler needs besides the unary handlers' dependencies. */
export interface WatchDeps extends UnaryDeps {
  /** Messages one stream may have queued for its client before it ends WATCH_TOO_SLOW. */
  readonly streamBuffer: number;
}

/**
 * WatchPlan in its call's scope (call-scope.ts: request id, decoding, caller, one log line when the
 * stream starts and one when it ends, error mapping), then the watch. Writers never wait for a stream: a change
 * is queued on it, and a stream whose client lets `streamBuffer` messages pile up ends
 * RESOURCE_EXHAUSTED WATCH_TOO_SLOW after the messages already queued, with the version to resume after.
 */
export function watchPlanHandler(
  service: WatchService,
  deps: WatchDeps,
): handleServerStreamingCall<ReceivedRequest<WatchPlanRequest>, PlanChange | Buffer> {
  return (call) => {
    const scope = new CallScope(deps, "WatchPlan", call, "stream");
    let subscription: Subscription | null = null;
    let ended = false;
    let lastQueued: number | null = null;
    let withContent = false;

    const finish = (error: unknown) => {
      if (ended) return;
      ended = true;
      subscription?.cancel();
      if (error === null) {
        scope.succeeded();
        return;
      }
      const wire = scope.failed(error);
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

    scope
      .run(async () => {
        const { request, caller } = await scope.open(call.request);
        withContent = request.includeContent;
        const watching = await service.watch(
          caller,
          { taskId: request.taskId, afterVersion: request.afterVersion, includeContent: withContent },
          { send, fail: finish },
        );
        if (ended) watching.cancel();
        else subscription = watching;
        scope.streaming();
      })
      .catch(finish);
  };
}
