import { planErrors } from "../../plans/errors";

/**
 * How long a refused expensive call is told to wait (google.rpc.RetryInfo): about what one such
 * call takes at its bound (a diff that gives up at DIFF_MAX_EDIT_LENGTH, computed in slices).
 */
export const EXPENSIVE_RETRY_AFTER_MS = 1_000;

/** A slot held by one expensive call; `release` frees it (again is a no-op). */
export interface ExpensiveSlot {
  release(): void;
}

/**
 * The concurrency limit of the calls whose cost grows with what the caller sends or chooses
 * (issue 54): DiffPlanRevisions, GetPlanChanges and the writes that ask to merge. At most
 * `perCaller` of them in flight per caller and `perReplica` in this process (0: no limit); past
 * either, the call is refused at once (never queued) with RESOURCE_EXHAUSTED
 * EXPENSIVE_CALLS_LIMITED and a RetryInfo of EXPENSIVE_RETRY_AFTER_MS. Held by the call's scope
 * (call-scope.ts), which every door passes, from its admission to its answer.
 */
export class ExpensiveCalls {
  private running = 0;
  private readonly byCaller = new Map<string, number>();

  constructor(
    readonly perCaller: number,
    readonly perReplica: number,
  ) {}

  /** Calls in flight now (the gauge). */
  get inFlight(): number {
    return this.running;
  }

  /** Takes a slot for `callerKey`, or throws EXPENSIVE_CALLS_LIMITED (nothing taken). */
  admit(callerKey: string): ExpensiveSlot {
    const mine = this.byCaller.get(callerKey) ?? 0;
    if (this.perCaller > 0 && mine >= this.perCaller)
      throw planErrors.expensiveCallsLimited("caller", this.perCaller, EXPENSIVE_RETRY_AFTER_MS);
    if (this.perReplica > 0 && this.running >= this.perReplica)
      throw planErrors.expensiveCallsLimited("replica", this.perReplica, EXPENSIVE_RETRY_AFTER_MS);
    this.running++;
    this.byCaller.set(callerKey, mine + 1);
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.running--;
        const left = (this.byCaller.get(callerKey) ?? 1) - 1;
        if (left === 0) this.byCaller.delete(callerKey);
        else this.byCaller.set(callerKey, left);
      },
    };
  }
}
