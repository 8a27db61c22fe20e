import type { Logger } from "pino";
import type { CommittedWrite } from "../ports/records";
import { type CommitListener, planEventsOf } from "./events";

/**
 * Publishes kandev's events of each commit as debug log lines (metadata only) until event streaming
 * exists; derives them only when debug lines are written.
 */
export class LogEventSink implements CommitListener {
  constructor(private readonly logger: Logger) {}

  committed(taskId: string, commit: CommittedWrite): void {
    if (!this.logger.isLevelEnabled("debug")) return;
    for (const event of planEventsOf(commit)) {
      const version = "plan" in event ? event.plan.version : undefined;
      const revision = "revision" in event ? event.revision.number : undefined;
      this.logger.debug({ taskId, event: event.type, version, revision }, "plan event");
    }
  }
}
