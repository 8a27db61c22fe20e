/** Why a certificate cannot be served now: past its notAfter, or before its notBefore. */
export type ValidityProblem = "expired" | "not_yet_valid";

/** Whether a certificate valid from `validFrom` to `validTo` (inclusive) is valid at `now`. */
export function validityProblem(validFrom: Date, validTo: Date, now: Date): ValidityProblem | null {
  if (now.getTime() > validTo.getTime()) return "expired";
  if (now.getTime() < validFrom.getTime()) return "not_yet_valid";
  return null;
}
