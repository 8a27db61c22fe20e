/**
 * Why a replica leaves a database node: it does not answer, or Galera says it cannot take writes.
 * `unreachable`: no connection or no answer within the probe's time; `non_primary`: it is cut off
 * from the majority (wsrep_cluster_status not Primary); `not_ready`: wsrep_ready OFF; `not_synced`:
 * joining, a donor or desynced (wsrep_local_state not 4, Synced).
 */
export type MoveReason = "unreachable" | "non_primary" | "not_ready" | "not_synced";

/** Every reason, as the metrics label them. */
export const MOVE_REASONS: readonly MoveReason[] = ["unreachable", "non_primary", "not_ready", "not_synced"];

/**
 * Whether a node whose global variables and status read `status` (wsrep_on, wsrep_cluster_status,
 * wsrep_ready, wsrep_local_state) can take the service's writes: null when it can, else why not. A
 * server without Galera (wsrep_on absent or OFF) always can. Pure.
 */
export function nodeVerdict(status: Readonly<Record<string, string>>): MoveReason | null {
  if ((status.wsrep_on ?? "OFF").toUpperCase() !== "ON") return null;
  if (status.wsrep_cluster_status !== "Primary") return "non_primary";
  if ((status.wsrep_ready ?? "").toUpperCase() !== "ON") return "not_ready";
  if (status.wsrep_local_state !== "4") return "not_synced";
  return null;
}
