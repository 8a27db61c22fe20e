import type { HeadWrite } from "../plans/ports/records";

/**
 * How a change row holds the plan content after the change:
 * - `head`: a copy of the HEAD content the transaction wrote (made by the database);
 * - `none`: no content (a deletion);
 * - `prefix`: an append's, without a copy: the first `keptChars` code points of the next version's
 *   content, then `tail` (its trailing whitespace, which the next append drops). Every write but an
 *   append first turns such rows of the version it replaces into copies, so a chain of them always
 *   ends at a copy or at HEAD.
 */
export type ChangeContent =
  | { readonly form: "head" }
  | { readonly form: "none" }
  | { readonly form: "prefix"; readonly keptChars: number; readonly tail: string };

/**
 * How the change row of a write holds the content after it. An append composed by the database
 * keeps no copy: its content is the kept part (`trimmedChars` code points, which every later append
 * keeps too) and its trailing whitespace, so the plan is not written a second time. Anything else
 * copies HEAD; a deletion has no content.
 *
 * The new content ends in its trimmed part, then the tail. The trimmed part reaches into the
 * appended suffix exactly when the suffix has a non-whitespace character (the kept prefix is the old
 * content's trimmed part); only then is the tail the suffix's last `contentBytes - trimmedBytes`
 * bytes, and the row can be a prefix.
 */
export function changeContentOf(head: HeadWrite): ChangeContent {
  if (head.deleted) return { form: "none" };
  const { content, trimmedChars, trimmedBytes } = head;
  if (typeof content === "string" || trimmedChars == null || trimmedBytes == null) return { form: "head" };
  if (trimmedBytes <= content.keepBytes) return { form: "head" };
  const suffix = Buffer.from(content.suffix, "utf8");
  const tailBytes = head.contentBytes - trimmedBytes;
  // Sizes that do not describe this composition get a copy: a prefix row must derive exactly.
  if (head.contentBytes !== content.keepBytes + suffix.length || tailBytes > suffix.length)
    return { form: "head" };
  const tail = suffix.subarray(suffix.length - tailBytes).toString("utf8");
  if ([...tail].length !== head.contentChars - trimmedChars) return { form: "head" };
  return { form: "prefix", keptChars: trimmedChars, tail };
}

/** The UTF-8 bytes of plan text a change row held as `content` stores (what it adds to the history). */
export function changeStoredBytes(content: ChangeContent, head: HeadWrite): number {
  if (content.form === "head") return head.contentBytes;
  return content.form === "prefix" ? Buffer.byteLength(content.tail, "utf8") : 0;
}
