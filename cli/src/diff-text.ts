import type { Output } from "./output";

/**
 * A unified diff for people: on a terminal coloured by line (and sanitized, by `out.content`),
 * byte-exact when piped (so `planctl diff ... | patch` works) or with NO_COLOR.
 */
export function printDiff(out: Output, unifiedDiff: string): void {
  if (!out.terminal) return out.content(unifiedDiff);
  const { bold, cyan, green, red } = out.colors;
  const lines = unifiedDiff.split(/(?<=\n)/);
  const colour = (line: string): ((text: string) => string) => {
    if (line.startsWith("+++ ") || line.startsWith("--- ")) return bold;
    if (line.startsWith("@@")) return cyan;
    if (line.startsWith("+")) return green;
    if (line.startsWith("-")) return red;
    return (text) => text;
  };
  // Each line is sanitized before it is coloured, so the colours are the only sequences printed.
  for (const line of lines) {
    const body = line.endsWith("\n") ? line.slice(0, -1) : line;
    out.raw(`${colour(line)(out.sanitize(body))}${line.endsWith("\n") ? "\n" : ""}`);
  }
}
