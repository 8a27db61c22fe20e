import type { ConflictRegion } from "./three-way-merge";
import { utf8Length } from "../../text/unicode";

/** The most UTF-8 bytes of conflicting regions a MERGE_CONFLICT carries (proto: "Merging a stale write"). */
export const CONFLICTS_MAX_BYTES = 4_096;

// Room kept for the closing "... N more regions not shown" line.
const TRAILER_ROOM = 64;

/**
 * The conflicting regions in diff3's marker format, cut to CONFLICTS_MAX_BYTES at a line boundary
 * (pure): per region a "@@ base lines A-B @@" line ("@@ after base line A @@" where both sides
 * inserted at one place), "<<<<<<< yours", your lines, "||||||| base", the base lines, "=======",
 * the current lines, ">>>>>>> current". A line without a terminator is shown with "\n". When cut,
 * the text ends "... N more regions not shown" (N counts the regions not shown whole).
 */
export function renderConflicts(regions: readonly ConflictRegion[]): string {
  const budget = CONFLICTS_MAX_BYTES - TRAILER_ROOM;
  let text = "";
  let used = 0;
  let shown = 0;
  for (const region of regions) {
    const lines = regionLines(region);
    const bytes = lines.reduce((sum, line) => sum + utf8Length(line), 0);
    if (used + bytes <= budget) {
      text += lines.join("");
      used += bytes;
      shown++;
      continue;
    }
    // The first region that does not fit is shown as far as it fits, a whole line at a time.
    for (const line of lines) {
      const size = utf8Length(line);
      if (used + size > budget) break;
      text += line;
      used += size;
    }
    break;
  }
  const hidden = regions.length - shown;
  return hidden === 0 ? text : `${text}... ${hidden} more ${hidden === 1 ? "region" : "regions"} not shown\n`;
}

function regionLines(region: ConflictRegion): string[] {
  const { baseStart, base } = region;
  const where =
    base.length === 0
      ? `@@ after base line ${baseStart} @@\n`
      : `@@ base lines ${baseStart + 1}-${baseStart + base.length} @@\n`;
  return [
    where,
    "<<<<<<< yours\n",
    ...region.ours.map(terminated),
    "||||||| base\n",
    ...base.map(terminated),
    "=======\n",
    ...region.theirs.map(terminated),
    ">>>>>>> current\n",
  ];
}

const terminated = (line: string) => (line.endsWith("\n") ? line : `${line}\n`);
