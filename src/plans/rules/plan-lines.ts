/**
 * A plan's lines as the diff and the merge compare them (proto: PlanDiff, "Merging a stale write"):
 * a line ends at "\n" and keeps it, so a CRLF line keeps its "\r\n" and an LF line its "\n"; a last
 * line without a terminator is a line of its own ("end" and "end\n" differ). Nothing is normalized:
 * joining the lines gives the text back exactly.
 */
export function splitLines(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (let end = text.indexOf("\n"); end !== -1; end = text.indexOf("\n", start)) {
    lines.push(text.slice(start, end + 1));
    start = end + 1;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

/** The text of `lines` (the inverse of splitLines). */
export function joinLines(lines: readonly string[]): string {
  return lines.join("");
}
