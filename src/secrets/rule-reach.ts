import { DEFAULT_REACH, type WindowReach } from "./scan-windows";

/**
 * Rules whose match can run over more lines than the default window (the hit's line and one each
 * side of the hit's line only): a YAML value under its key, a PEM block, a base64 blob broken into lines, a curl command continued with `\`. Every
 * vendored rule whose pattern can cross a line is here or is pinned by a test as fitting the default
 * (test/unit/secrets/secret-rules.test.ts), so a rule-set upgrade cannot shrink one silently.
 */
const WIDER_REACH: Readonly<Record<string, WindowReach>> = Object.freeze({
  // `password:` then the value on the next line (its `[\s'"]{0,3}` can cross one line break).
  // Its match starts at the keyword's word (template-rules.ts) and its value is at most 150
  // characters, or one unbroken base64 run (cut at 256: still found, its range shorter).
  "generic-api-key": { linesBefore: 0, linesAfter: 1, charsBefore: 16, charsAfter: 256 },
  // -----BEGIN ... PRIVATE KEY----- to its END line: a 8192-bit RSA key is about 6.5 KiB of PEM.
  "private-key": { linesBefore: 0, linesAfter: Infinity, charsBefore: 128, charsAfter: 16 * 1024 },
  // A base64 JWT wrapped over lines.
  "jwt-base64": { linesBefore: 0, linesAfter: Infinity, charsBefore: 16, charsAfter: 16 * 1024 },
  // `curl ... \` continued on up to five lines before the -H / -u option.
  "curl-auth-header": { linesBefore: 0, linesAfter: 6, charsBefore: 16, charsAfter: 4096 },
  "curl-auth-user": { linesBefore: 0, linesAfter: 6, charsBefore: 16, charsAfter: 4096 },
});

/** The window a rule runs in around each of its keyword hits. */
export function reachOf(ruleId: string): WindowReach {
  return WIDER_REACH[ruleId] ?? DEFAULT_REACH;
}

/** The rule ids with a wider reach than the default (for the test that pins them). */
export const WIDER_REACH_RULES: readonly string[] = Object.freeze(Object.keys(WIDER_REACH));
