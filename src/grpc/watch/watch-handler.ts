import type { handleServerStreamingCall } from "@grpc/grpc-js";
import type { PlanChange, WatchPlanRequest } from "@taskplans/contract";
import { planErrors } from "../../plans/errors";
import type { Subscription } from "../../watch/change-hub";
import type { WatchMessage, WatchService } from "../../watch/watch-service";
import { watchMessageBytes } from "../encode/encode-change";
import type { ReceivedRequest } from "../wire/received-request";
import { CallScope } from "../call-scope";
import type { UnaryDeps } from "../unary";
import type { WatchBuffers } from "./watch-buffers";
import { type OutboxLimits, WatchOutbox } from "./watch-outbox";
import { watchTransportOf } from "./watch-transport";

/** How long a stream refused WATCH_STREAMS_EXHAUSTED is told to wait (google.rpc.RetryInfo). */
const STREAMS_RETRY_MS = 1_000;
/** Room a change without content needs (a plan's metadata, its author, a title of up to 1,000 characters). */
const SMALL_MESSAGE = 16 * 1024;

/** What the WatchPlan handler needs besides the unary handlers' dependencies. */
export interface WatchDeps extends UnaryDeps {
  /** What one stream may queue for its client before it ends WATCH_TOO_SLOW. */
  readonly streamBuffer: OutboxLimits;
  /** What this replica holds for all its streams, and how many it serves. */
  readonly watchBuffers: WatchBuffers;
}

/**
 * WatchPlan in its call's scope (call-scope.ts: request id, decoding, caller, one log line when the
 * stream starts and one when it ends, error mapping), then the watch. Writers never wait for a
 * stream: a change is queued on its outbox (watch-outbox.ts), and a stream whose queue passes its
 * limits (messages or bytes, or the replica's bytes) ends RESOURCE_EXHAUSTED WATCH_TOO_SLOW with the
 * version to resume after, its queue dropped. A catch-up waits for the stream to drain instead
 * (`drained`), so a client that reads is never told it is slow. A stream evicted from the replica's
 * budget for another's sake (watch-buffers.ts) ends the same way and its transport is reset, which
 * drops the message its client did not take. Past the replica's stream cap a stream is refused at
 * start RESOURCE_EXHAUSTED WATCH_STREAMS_EXHAUSTED with RetryInfo.
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
    const transport = watchTransportOf(call);
    const outbox = new WatchOutbox(transport, deps.streamBuffer, deps.watchBuffers, (evicted) => {
      finish(planErrors.watchTooSlow(outbox.handedVersion));
      if (evicted) transport.reset();
    });
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
        if (!outbox.admit())
          throw planErrors.watchStreamsExhausted(deps.watchBuffers.maxStreams, STREAMS_RETRY_MS);
        const { request, caller } = await scope.open(call.request);
        withContent = request.includeContent;
        const watching = await service.watch(
          caller,
          { taskId: request.taskId, afterVersion: request.afterVersion, includeContent: withContent },
          {
            send,
            drained: () => outbox.drained(),
            room: (content) => outbox.room(content ? transport.largestHold : SMALL_MESSAGE),
            fail: finish,
          },
        );
        if (ended) watching.cancel();
        else subscription = watching;
        scope.streaming();
      })
      .catch(finish);
  };
}
