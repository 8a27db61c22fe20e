import type { handleServerStreamingCall } from "@grpc/grpc-js";
import type { PlanChange, WatchPlanRequest } from "@taskplans/contract";
import { planErrors } from "../plans/errors";
import type { Subscription } from "../watch/change-hub";
import type { WatchMessage, WatchService } from "../watch/watch-service";
import { watchMessageBytes } from "./encode-change";
import type { ReceivedRequest } from "./received-request";
import { CallScope } from "./call-scope";
import type { UnaryDeps } from "./unary";
import type { WatchBuffers } from "./watch-buffers";
import { type OutboxLimits, WatchOutbox } from "./watch-outbox";

/** What the WatchPlan handler needs besides the unary handlers' dependencies. */
export interface WatchDeps extends UnaryDeps {
  /** What one stream may queue for its client before it ends WATCH_TOO_SLOW. */
  readonly streamBuffer: OutboxLimits;
  /** What this replica holds for all its streams. */
  readonly watchBuffers: WatchBuffers;
}

/**
 * WatchPlan in its call's scope (call-scope.ts: request id, decoding, caller, one log line when the
 * stream starts and one when it ends, error mapping), then the watch. Writers never wait for a
 * stream: a change is queued on its outbox (watch-outbox.ts), and a stream whose queue passes its
 * limits (messages or bytes, or the replica's bytes) ends RESOURCE_EXHAUSTED WATCH_TOO_SLOW with the
 * version to resume after, its queue dropped. A catch-up waits for the stream to drain instead
 * (`drained`), so a client that reads is never told it is slow.
 */
export function watchPlanHandler(
  service: WatchService,
  deps: WatchDeps,
): handleServerStreamingCall<ReceivedRequest<WatchPlanRequest>, PlanChange | Buffer> {
  return (call) => {
    const scope = new CallScope(deps, "WatchPlan", call, "stream");
    // Changes committed from here on are live for this stream: their delay from commit to hand-off is
    // the delivery delay of docs/slo.md (a replay of older changes is not a delay).
    const opened = Date.now();
    const outbox = new WatchOutbox(
      (bytes, written) => call.write(bytes, written),
      deps.streamBuffer,
      deps.watchBuffers,
    );
    let subscription: Subscription | null = null;
    let ended = false;
    let withContent = false;

    const finish = (error: unknown) => {
      if (ended) return;
      ended = true;
      subscription?.cancel();
      outbox.close();
      if (error === null) {
        scope.succeeded();
        return;
      }
      const wire = scope.failed(error);
      call.emit("error", { code: wire.code, details: wire.details, metadata: wire.metadata });
    };
    const send = (message: WatchMessage) => {
      if (ended) return;
      const version = message.kind === "change" ? message.change.version : (message.plan?.version ?? null);
      if (!outbox.offer(watchMessageBytes(message, withContent), version))
        finish(planErrors.watchTooSlow(outbox.handedVersion));
      else if (message.kind === "change" && message.change.step === 0) {
        const committed = message.change.committedAt.getTime();
        if (committed >= opened) deps.metrics.watchDelivered(Math.max(0, Date.now() - committed) / 1000);
      }
    };
    call.on("cancelled", () => {
      finish(null);
      outbox.abandon();
    });

    scope
      .run(async () => {
        const { request, caller } = await scope.open(call.request);
        withContent = request.includeContent;
        const watching = await service.watch(
          caller,
          { taskId: request.taskId, afterVersion: request.afterVersion, includeContent: withContent },
          { send, drained: () => outbox.drained(), fail: finish },
        );
        if (ended) watching.cancel();
        else subscription = watching;
        scope.streaming();
      })
      .catch(finish);
  };
}
