import type { ChecklistCounter } from "../ports/checklist-counter";
import type { ContentChange, StoredChecklist } from "../ports/records";
import { appendedChecklist, closedChecklist, probedText } from "../rules/checklist-append";
import { trimTrailingWhitespace } from "../../text/unicode";
import type { WriteEnv, WriteState } from "../pipeline/write-command";

/**
 * The stored checklist of `text`: one count of the text with the end probe appended, which also says
 * whether the text ends closed; a text that ends open is counted again alone (rare: an unclosed
 * fence or HTML block at the end of a plan).
 */
export async function storedChecklistOf(text: string, counter: ChecklistCounter): Promise<StoredChecklist> {
  const closed = closedChecklist(await counter.count(probedText(text)));
  if (closed !== null) return closed;
  const { checked, total } = await counter.count(text);
  return { checked, total, openEnd: true };
}

/**
 * The checklist of the content a write stores (`change`, on `state`'s plan): a whole text is
 * counted; an append the database composes adds its fragment's count to the stored one when the
 * fragment is blocks of its own (rules/checklist-progress.ts appendedChecklist), and else counts
 * the result whole, on the stored text read under the lock.
 */
export async function writtenChecklist(
  state: WriteState,
  env: WriteEnv,
  change: ContentChange,
): Promise<StoredChecklist> {
  if (typeof change === "string") return storedChecklistOf(change, env.checklist);
  const storedEmpty = change.keepChars === 0;
  // The suffix is the separator's blank line, then the fragment (composeAppendInStore).
  const fragment = storedEmpty ? change.suffix : change.suffix.slice(2);
  const own = await storedChecklistOf(fragment, env.checklist);
  const sum = appendedChecklist(state.live?.checklist ?? null, storedEmpty, fragment, own);
  if (sum !== null) return sum;
  const stored = trimTrailingWhitespace(await env.storedContent());
  return storedChecklistOf(stored + change.suffix, env.checklist);
}
