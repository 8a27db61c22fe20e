import type { HealthImplementation } from "grpc-health-check";
import { SERVICE_NAMES } from "../server";

/** What the service needs before it can serve calls; each is set by whoever watches it. */
export interface Conditions {
  /** The database answers (the health monitor's probe). */
  readonly database: boolean;
  /** Callers can be verified: auth off, a static key or secret, or a JWK Set fetched at least once. */
  readonly identity: boolean;
  /** Not shutting down (false from the first SIGTERM on). */
  readonly running: boolean;
}

type Status = "SERVING" | "NOT_SERVING";

/**
 * What grpc.health.v1 reports for each service name. The plan and task services need all three
 * conditions; the whole server ("", what the chart's startup and liveness probes ask) does not wait
 * for the identity provider: a pod that could not fetch the keys yet is kept out of traffic by its
 * readiness probe (`taskplans.v1.PlanService`), not restarted.
 */
export function statusesOf(conditions: Conditions): Record<(typeof SERVICE_NAMES)[number], Status> {
  const up = conditions.database && conditions.running;
  const callable: Status = up && conditions.identity ? "SERVING" : "NOT_SERVING";
  return {
    "": up ? "SERVING" : "NOT_SERVING",
    "taskplans.v1.PlanService": callable,
    "taskplans.v1.TaskService": callable,
  };
}

/** The conditions as they stand, written to the health service on every change. */
export class ServingConditions {
  private conditions: Conditions;

  constructor(
    private readonly health: HealthImplementation,
    initial: Conditions,
  ) {
    this.conditions = initial;
    this.report();
  }

  set(condition: keyof Conditions, holds: boolean): void {
    if (this.conditions[condition] === holds) return;
    this.conditions = { ...this.conditions, [condition]: holds };
    this.report();
  }

  private report(): void {
    for (const [name, status] of Object.entries(statusesOf(this.conditions)))
      this.health.setStatus(name, status);
  }
}
