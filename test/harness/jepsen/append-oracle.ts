/**
 * The fault checker's own reading of the append rule (REQ-TASKS-PLAN-APPEND-002), written apart from
 * the service's composeAppend so that a bug there cannot also hide in the checker: the stored text
 * without trailing Unicode White_Space, one blank line, then the fragment without its leading lines
 * that hold only White_Space (a last line without "\n" is kept as it is); an empty stored text gives
 * the fragment so trimmed.
 */
export function expectedAppend(stored: string, fragment: string): string {
  const kept = stored.replace(/\p{White_Space}+$/u, "");
  const added = fragment.replace(/^(?:[^\P{White_Space}\n]*\n)*/u, "");
  return kept.length === 0 ? added : `${kept}\n\n${added}`;
}
