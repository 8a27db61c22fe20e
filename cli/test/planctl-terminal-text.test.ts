import { safeJson, terminalLine, terminalText } from "@taskplans/cli";

// Agent text printed to a terminal (STYLE.md habit 16): every control sequence removed whole, every
// other control character shown as a visible escape, line breaks kept only where text is multi-line.
describe("planctl's terminal text hygiene", () => {
  it.each([
    ["CSI colours and cursor moves", "a\u001b[31mred\u001b[0m\u001b[2J\u001b[Hb", "aredb"],
    ["the one-byte C1 CSI", "a\u009b2Jb", "ab"],
    ["OSC window title ended by BEL", "a\u001b]0;pwned\u0007b", "ab"],
    ["OSC 52 clipboard ended by ST", "a\u001b]52;c;ZXZpbA==\u001b\\b", "ab"],
    ["OSC 8 hyperlink", "\u001b]8;;http://evil\u001b\\link\u001b]8;;\u001b\\", "link"],
    ["an unterminated OSC hides no more than its line", "a\u001b]0;x\nnext", "a\nnext"],
    ["DCS, and an escape with one character", "a\u001bPq#0\u001b\\b\u001bc", "ab"],
    ["other C0, DEL and C1 as visible escapes", "a\u0000b\u0007c\u007fd\u0085e", "a\\x00b\\x07c\\x7fd\\x85e"],
    ["bidi overrides and isolates", "a\u202eb\u2066c", "a\\u202eb\\u2066c"],
    ["CR shown, LF and tab kept", "a\r\nb\tc", "a\\r\nb\tc"],
    ["astral characters and plain text untouched", "plan 🚀 ✓ \u2028", "plan 🚀 ✓ \u2028"],
  ])("terminalText: %s", (_what, input, shown) => {
    expect(terminalText(input)).toBe(shown);
  });

  it("terminalLine also escapes line and paragraph separators", () => {
    expect(terminalLine("a\nb\u2028c\u001b[1m")).toBe("a\\nb\\u2028c");
  });

  it("safeJson escapes C1, DEL and separators that JSON.stringify leaves raw, and stays the same value", () => {
    const value = { text: "a\u001b[31m\u009b\u007f\u2028\u202e\u0000" };
    const printed = safeJson(value);
    // eslint-disable-next-line no-control-regex -- control characters are what is looked for
    expect(printed).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u202e]/);
    expect(JSON.parse(printed)).toEqual(value);
  });
});
