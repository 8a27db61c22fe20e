import { checklistWords } from "./checklist-text";
import type { planJson } from "./shapes";

/**
 * `planctl get TASK --meta` as text: one `name: value` line per field of the plan's metadata, never
 * its content (docs/planctl.md). The checklist line says the progress the service counted ("3 of 5
 * done", "none" for a plan without a checklist) and is left out when the plan was not counted yet.
 */
export function planMetaLines(plan: ReturnType<typeof planJson>): string[] {
  const lines = [
    `task: ${plan.task_id}`,
    `title: ${plan.title}`,
    `version: ${plan.version}`,
    `size: ${plan.content_bytes} bytes, ${plan.content_chars} characters`,
    `revision: ${plan.latest_revision_number}`,
    `created: ${plan.created_at ?? "-"}${plan.created_by ? ` by ${plan.created_by}` : ""}`,
    `updated: ${plan.updated_at ?? "-"}`,
  ];
  if (plan.implementation_started_at !== null)
    lines.push(
      `implementation started: ${plan.implementation_started_at}${plan.implementation_started_by ? ` by ${plan.implementation_started_by}` : ""}`,
    );
  const checklist = checklistWords(plan.checklist);
  if (checklist !== null) lines.push(`checklist: ${checklist}`);
  return lines;
}
