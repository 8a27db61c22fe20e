import type { ChecklistCount } from "./records";

/**
 * Counts a text's task-list items by the plan's markdown rules (rules/checklist-progress.ts
 * countChecklist), off the event loop when the text is large (src/threads/checklist-thread.ts): a
 * write's caller chooses its plan's size and shape, and a 200 KiB one takes 27 to 114 ms to lex on a
 * quiet machine (bench/RESULTS.md, `bench:checklist`), several times that on a loaded one.
 */
export interface ChecklistCounter {
  count(text: string): Promise<ChecklistCount>;
}
