/**
 * Text an agent wrote is hostile wherever it is displayed (STYLE.md habit 16): a plan, a title, an
 * author's name or an error message can carry terminal control sequences that recolour the screen,
 * move the cursor, retitle the window, write hyperlinks (OSC 8) or reach the clipboard (OSC 52).
 * Before anything is printed to a terminal it goes through one of these functions; `get` and `show`
 * to a pipe write the content byte-exact instead.
 */

// Whole sequences first, so that their parameters do not survive as text: CSI (ESC [ or the C1
// byte U+009B, parameters, one final byte), OSC / DCS / SOS / PM / APC strings (ESC ] P X ^ _ or
// their C1 forms, ended by BEL, ESC \ or ST U+009C, or at the end of the line, so that an unterminated one
// hides no more than its own line), then any other
// two-byte escape (ESC and one character).
const SEQUENCES = new RegExp(
  [
    "(?:\\u001b\\[|\\u009b)[\\u0030-\\u003f]*[\\u0020-\\u002f]*[\\u0040-\\u007e]?",
    "(?:\\u001b[\\]PX^_]|[\\u0090\\u0098\\u009d\\u009e\\u009f])[^\\u0007\\u001b\\u009c\\n]*(?:\\u0007|\\u001b\\\\|\\u009c)?",
    "\\u001b[\\u0020-\\u007e]?",
  ].join("|"),
  "g",
);

// What is left of the controls, shown as visible escapes: C0 but tab and line feed, DEL, C1, and
// the bidirectional overrides and isolates that reorder what a reader sees ("Trojan Source").
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROLS_IN_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROLS_IN_LINE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const visible = (char: string): string => {
  const code = char.codePointAt(0) ?? 0;
  if (char === "\n") return "\\n";
  if (char === "\t") return "\\t";
  if (char === "\r") return "\\r";
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
};

/** Multi-line text for a terminal (a plan, a diff): sequences removed, other controls escaped; keeps \n and \t. */
export function terminalText(text: string): string {
  return text.replace(SEQUENCES, "").replace(CONTROLS_IN_TEXT, visible);
}

/** One field on one line (a title, an author, a table cell, an error message): line breaks escaped too. */
export function terminalLine(text: string): string {
  return text.replace(SEQUENCES, "").replace(CONTROLS_IN_LINE, visible);
}

// JSON.stringify escapes C0 only: C1, DEL, U+2028/2029 and the bidi controls are escaped here, so
// a JSON document printed to a terminal is inert too (and stays the same JSON value).
const UNESCAPED_IN_JSON = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** A value as one line of JSON whose every control character is a \u escape. */
export function safeJson(value: unknown): string {
  return JSON.stringify(value).replace(
    UNESCAPED_IN_JSON,
    (char) => `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`,
  );
}
