import { limits } from "./limits";

/**
 * The reduction guard: a replacement is suspicious when the prior content had at least 2,000 code
 * points and the new content keeps strictly fewer than half of them (exactly half is not a
 * reduction). Counts are code points, never bytes.
 */
export function isSuspiciousReduction(priorChars: number, newChars: number): boolean {
  return priorChars >= limits.reductionMinPriorChars && newChars * 2 < priorChars;
}
