import type { EventSink, PlanEvent } from "../../src/plans/events";

/** Keeps published events for assertions. */
export class RecordingEventSink implements EventSink {
  readonly published: { taskId: string; event: PlanEvent }[] = [];

  publish(taskId: string, events: readonly PlanEvent[]): void {
    for (const event of events) this.published.push({ taskId, event });
  }

  /** Event types published for a task, in order. */
  typesFor(taskId: string): string[] {
    return this.published.filter((entry) => entry.taskId === taskId).map((entry) => entry.event.type);
  }

  /** Events of a task, in order. */
  eventsFor(taskId: string): PlanEvent[] {
    return this.published.filter((entry) => entry.taskId === taskId).map((entry) => entry.event);
  }
}
