import type { PlanWriteTx } from "./ports/plan-store";
import {
  checkHistoryBudget,
  type HistoryBudget,
  type HistoryGrowth,
  type HistoryUsage,
  historyOverBudget,
  mayExceedHistoryBudget,
} from "./history-budget";
import { limits } from "./limits";
import type { WriteState } from "./write-context";

/**
 * The history budget of one write, around its rows: `start` before them (null when the task's
 * history cannot be near its budget, judged without reading it), `finish` after them, in the same
 * transaction. The history is measured before; after only when the write could have taken it past
 * the budget (at most three copies: its revision, its change row, a change row it materialized).
 */
export class HistoryCheck {
  private constructor(
    private readonly tx: PlanWriteTx,
    private readonly taskId: string,
    private readonly budget: HistoryBudget,
    private readonly before: HistoryUsage,
    private readonly growth: HistoryGrowth,
  ) {}

  static async start(
    tx: PlanWriteTx,
    budget: HistoryBudget,
    state: WriteState,
    growth: HistoryGrowth | undefined,
  ): Promise<HistoryCheck | null> {
    if (growth === undefined) return null;
    const history = {
      latestNumber: Math.max(state.latest?.number ?? 0, state.head?.latestRevisionNumber ?? 0),
      headVersion: state.head?.version ?? 0,
    };
    if (!mayExceedHistoryBudget(budget, history, growth, limits.maxPlanBytes)) return null;
    return new HistoryCheck(tx, state.taskId, budget, await tx.historyUsage(state.taskId), growth);
  }

  /**
   * Refuses the write (HISTORY_QUOTA_EXCEEDED) if its rows took the history past the budget, after
   * the change history yielded what it could (the task's oldest change rows before `ownVersion`).
   */
  async finish(ownVersion: number): Promise<void> {
    const { before, budget, growth } = this;
    const copy = Math.max(limits.maxPlanBytes, growth.revisionBytes);
    const fits =
      (budget.maxBytes === 0 || before.bytes + 3 * copy <= budget.maxBytes) &&
      (budget.maxRevisions === 0 || before.revisions + 1 <= budget.maxRevisions);
    if (fits) return;
    let after = await this.tx.historyUsage(this.taskId);
    const excess = historyOverBudget(budget, after);
    if (excess > 0) {
      const freed = await this.tx.trimChangeHistory(this.taskId, excess, ownVersion);
      after = { ...after, bytes: after.bytes - freed };
    }
    checkHistoryBudget(budget, before, after);
  }
}
