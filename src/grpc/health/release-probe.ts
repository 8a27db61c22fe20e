import {
  type Client,
  credentials,
  makeGenericClientConstructor,
  Metadata,
  type ServiceError,
  status,
} from "@grpc/grpc-js";
import { service as healthService } from "grpc-health-check";
import { GetPlanRequest, PlanServiceClient } from "@taskplans/contract";
import { decodeStatusDetails, ERROR_DOMAIN } from "@taskplans/contract";

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

/** How the probe reaches the release. */
export interface ProbeOptions {
  /** Sent as a bearer token, so with auth on the read passes authentication. */
  readonly token: string | null;
  readonly timeoutMs: number;
  /** TLS: the CA bundle to trust (PEM); with `clientCert`, the client certificate and key for mTLS. */
  readonly tls: {
    readonly ca: Buffer;
    readonly clientCert: { readonly cert: Buffer; readonly key: Buffer } | null;
    /** The name the server certificate is checked against, when not the target's host. */
    readonly serverName: string | null;
  } | null;
  /**
   * Only grpc.health.v1 for this service ("" for the whole server), no plan read: what a kubelet
   * probe asks. Null: the full check.
   */
  readonly healthOnly: string | null;
}

/**
 * Checks a release end to end through `target` (the chart's Service, host:port): grpc.health.v1
 * reports the plan service SERVING, and one plan read is answered by the service itself.
 */
export async function probeRelease(target: string, options: ProbeOptions): Promise<ProbeResult> {
  const { tls } = options;
  const channel = tls
    ? credentials.createSsl(tls.ca, tls.clientCert?.key ?? null, tls.clientCert?.cert ?? null)
    : credentials.createInsecure();
  const channelOptions = tls?.serverName ? { "grpc.ssl_target_name_override": tls.serverName } : {};
  const Health = makeGenericClientConstructor(healthService, "Health");
  const health = new Health(target, channel, channelOptions);
  const plans = new PlanServiceClient(target, channel, channelOptions);
  const deadline = () => ({ deadline: Date.now() + options.timeoutMs });
  const service = options.healthOnly ?? PLAN_SERVICE;
  try {
    const serving = await healthStatus(health, service, deadline().deadline);
    const named = service === "" ? "the server" : service;
    if (serving !== "SERVING") return { ok: false, summary: `${target}: ${named} health is ${serving}` };
    if (options.healthOnly !== null) return { ok: true, summary: `${target}: ${named} SERVING` };
    const metadata = new Metadata();
    if (options.token) metadata.set("authorization", `Bearer ${options.token}`);
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

function healthStatus(health: Client, service: string, deadline: number): Promise<string> {
  return new Promise((resolve, reject) =>
    (health as unknown as { Check: (...args: unknown[]) => void }).Check(
      { service },
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
