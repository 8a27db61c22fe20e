import type { ChecklistProgress } from "@taskplans/client";

/**
 * How planctl shows a plan's checklist progress (issue 56, item 3; docs/planctl.md, "Checklist
 * progress"): the figure the service counted when the plan was written (`Plan.checklist`,
 * `PlanRevision.checklist`, `Task.checklist`). Absent means "not counted yet" (a plan written before
 * the service counted it): nothing is shown, and nothing is counted here either, so a figure planctl
 * prints is always the service's.
 */
export interface ChecklistJson {
  readonly checked: number;
  readonly total: number;
}

/** The `-o json` form, `{checked, total}` as numbers, or undefined when the answer carries none. */
export function checklistJson(progress: ChecklistProgress | undefined): ChecklistJson | undefined {
  return progress ? { checked: Number(progress.checked), total: Number(progress.total) } : undefined;
}

/** `{ checklist }` to spread into a JSON document, or `{}`: the field is left out when absent. */
export function checklistField(progress: ChecklistProgress | undefined): { checklist?: ChecklistJson } {
  const shown = checklistJson(progress);
  return shown ? { checklist: shown } : {};
}

/** The words of `get --meta`'s line: "3 of 5 done", "none" (no checklist), or null (not counted). */
export function checklistWords(progress: ChecklistJson | undefined): string | null {
  if (!progress) return null;
  return progress.total === 0 ? "none" : `${progress.checked} of ${progress.total} done`;
}

/** A table cell (`history`, `task get`, `task list`): "3/5", "none" (no checklist), "-" (not counted). */
export function checklistCell(progress: ChecklistJson | undefined): string {
  if (!progress) return "-";
  return progress.total === 0 ? "none" : `${progress.checked}/${progress.total}`;
}
