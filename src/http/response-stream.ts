import { EventEmitter } from "node:events";
import { fromBinary, type DescMessage, type Message } from "@bufbuild/protobuf";
import type { Metadata } from "@grpc/grpc-js";
import { Code, ConnectError } from "@connectrpc/connect";
import { connectErrorOf, type GrpcFailure } from "./connect-error";

// A change is encoded once and written to every stream that watches its task (watch-handler.ts):
// it is decoded once for all of them too.
const decoded = new WeakMap<Uint8Array, Message>();

/**
 * The server-stream side of a grpc-js call, as a handler uses it (write with a callback once the
 * message is taken, an "error" to end the call, `end()` to end it with success, "cancelled" when the
 * client goes; the trailers of an error or of `end()` go to `sendTrailer`), read by
 * Connect as an async iterable of messages. A write's callback fires when Connect takes the message
 * for its client, so the handler's outbox (watch-outbox.ts) sees a slow HTTP client as it sees a slow
 * gRPC one.
 */
export class ResponseStream extends EventEmitter {
  private readonly queue: { bytes: Uint8Array; written: () => void }[] = [];
  private failure: GrpcFailure | null = null;
  private ended = false;
  private wake: (() => void) | null = null;

  constructor(
    private readonly output: DescMessage,
    private readonly signal: AbortSignal,
    private readonly sendTrailer: (trailer: Metadata | undefined) => void,
  ) {
    super();
    this.on("error", (failure: GrpcFailure) => {
      this.sendTrailer(failure.metadata);
      this.failure = failure;
      this.wake?.();
    });
    const cancelled = () => {
      this.emit("cancelled");
      this.wake?.();
    };
    if (signal.aborted) queueMicrotask(cancelled);
    else signal.addEventListener("abort", cancelled, { once: true });
  }

  write(bytes: Uint8Array, written: () => void = () => undefined): boolean {
    this.queue.push({ bytes, written });
    this.wake?.();
    return true;
  }

  /** The handler ends the stream with success: the messages written so far are sent, then its end. */
  end(trailer?: Metadata): void {
    this.sendTrailer(trailer);
    this.ended = true;
    this.wake?.();
  }

  async *messages(): AsyncGenerator<Message> {
    for (;;) {
      const next = this.queue.shift();
      if (next) {
        let message = decoded.get(next.bytes);
        if (!message) {
          message = fromBinary(this.output, next.bytes);
          decoded.set(next.bytes, message);
        }
        yield message;
        next.written();
        continue;
      }
      if (this.failure) throw connectErrorOf(this.failure);
      if (this.ended) return;
      if (this.signal.aborted) {
        // The protocol's timeout passed: the stream ends deadline_exceeded, as over gRPC.
        const reason: unknown = this.signal.reason;
        if (reason instanceof ConnectError && reason.code === Code.DeadlineExceeded) throw reason;
        return;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
  }
}
