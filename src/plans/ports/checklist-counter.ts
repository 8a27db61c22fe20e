import type { ChecklistCount } from "./records";

/**
 * Counts a text's task-list items by the plan's markdown rules (rules/checklist-progress.ts
 * countChecklist), off the event loop when the text is large (src/threads/checklist-thread.ts): a
 * write's caller chooses its plan's size and shape, and a 256 KiB plan takes 50 to 200 ms to lex.
 */
export interface ChecklistCounter {
  count(text: string): Promise<ChecklistCount>;
}
