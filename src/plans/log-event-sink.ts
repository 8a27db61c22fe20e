import type { Logger } from "pino";
import type { EventSink, PlanEvent } from "./events";

/** Publishes events as debug log lines (metadata only) until event streaming exists. */
export class LogEventSink implements EventSink {
  constructor(private readonly logger: Logger) {}

  publish(taskId: string, events: readonly PlanEvent[]): void {
    for (const event of events) {
      const version = "plan" in event ? event.plan.version : undefined;
      const revision = "revision" in event ? event.revision.number : undefined;
      this.logger.debug({ taskId, event: event.type, version, revision }, "plan event");
    }
  }
}
