import {
  type Client,
  credentials,
  makeGenericClientConstructor,
  Metadata,
  type ServiceError,
  status,
} from "@grpc/grpc-js";
import { service as healthService } from "grpc-health-check";
import { GetPlanRequest, PlanServiceClient } from "../../generated/ts/taskplans/v1/plan_service";
import { decodeStatusDetails, ERROR_DOMAIN } from "../contract/rich-status";

/** What one probe of a release found; `ok` false means the release is not healthy. */
export interface ProbeResult {
  readonly ok: boolean;
  /** One line for the hook's log. */
  readonly summary: string;
}

// A read of a task id nobody uses: the service must answer it from the database with one of its own
// errors (NOT_FOUND, or PERMISSION_DENIED when auth hides the task). UNAVAILABLE, INTERNAL or a
// transport error mean the release cannot serve reads.
const READ_ANSWERS = new Set<number>([status.OK, status.NOT_FOUND, status.PERMISSION_DENIED]);
const PLAN_SERVICE = "taskplans.v1.PlanService";

/**
 * Checks a release end to end through `target` (the chart's Service, host:port): grpc.health.v1
 * reports the plan service SERVING, and one plan read is answered by the service itself.
 * `token` (optional) is sent as a bearer token, so with auth on the read passes authentication.
 */
export async function probeRelease(
  target: string,
  token: string | null,
  timeoutMs: number,
): Promise<ProbeResult> {
  const Health = makeGenericClientConstructor(healthService, "Health");
  const health = new Health(target, credentials.createInsecure());
  const plans = new PlanServiceClient(target, credentials.createInsecure());
  const deadline = () => ({ deadline: Date.now() + timeoutMs });
  try {
    const serving = await healthStatus(health, deadline().deadline);
    if (serving !== "SERVING")
      return { ok: false, summary: `${target}: ${PLAN_SERVICE} health is ${serving}` };
    const metadata = new Metadata();
    if (token) metadata.set("authorization", `Bearer ${token}`);
    const request = GetPlanRequest.fromPartial({ taskId: `release-probe-${Date.now()}` });
    const error = await new Promise<ServiceError | null>((resolve) =>
      plans.getPlan(request, metadata, deadline(), (err) => resolve(err)),
    );
    const code = error?.code ?? status.OK;
    const reason = decodeStatusDetails(error?.metadata)?.errorInfo;
    const answered = READ_ANSWERS.has(code) && (code === status.OK || reason?.domain === ERROR_DOMAIN);
    const what = error ? `${status[code]} ${reason?.reason ?? "(no ErrorInfo)"}` : "OK";
    return answered
      ? { ok: true, summary: `${target}: ${PLAN_SERVICE} SERVING; a plan read answered ${what}` }
      : { ok: false, summary: `${target}: a plan read failed with ${what}: ${error?.details ?? ""}` };
  } catch (error) {
    return { ok: false, summary: `${target}: ${error instanceof Error ? error.message : String(error)}` };
  } finally {
    health.close();
    plans.close();
  }
}

/**
 * Repeats `probe` every `pauseMs` until it passes or `budgetMs` has passed since the first try;
 * resolves the passing result, or the last failing one, with the number of probes it took.
 */
export async function probeReleaseWithin(
  probe: () => Promise<ProbeResult>,
  budgetMs: number,
  pauseMs: number,
): Promise<ProbeResult> {
  const giveUpAt = Date.now() + budgetMs;
  for (let attempt = 1; ; attempt++) {
    const result = await probe();
    if (result.ok || Date.now() + pauseMs > giveUpAt) {
      return attempt === 1 ? result : { ...result, summary: `${result.summary} (probe ${attempt})` };
    }
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}

function healthStatus(health: Client, deadline: number): Promise<string> {
  return new Promise((resolve, reject) =>
    (health as unknown as { Check: (...args: unknown[]) => void }).Check(
      { service: PLAN_SERVICE },
      { deadline },
      (error: Error | null, response: { status: number | string }) => {
        if (error) reject(new Error(`health check failed: ${error.message}`));
        else
          resolve(
            typeof response.status === "number"
              ? (["UNKNOWN", "SERVING", "NOT_SERVING"][response.status] ?? "UNKNOWN")
              : response.status,
          );
      },
    ),
  );
}
