import {
  codePointLength,
  isBlank,
  isWhitespace,
  trimTrailingWhitespace,
  utf8Length,
} from "../../../src/text/unicode";

describe("whitespace is Unicode White_Space (one helper for validation and composition)", () => {
  it.each([
    ["U+0020 space", "\u0020"],
    ["U+0009 tab", "\t"],
    ["U+000A line feed", "\n"],
    ["U+000D carriage return", "\r"],
    ["U+0085 next line", "\u0085"],
    ["U+00A0 no-break space", "\u00a0"],
    ["U+2028 line separator", "\u2028"],
    ["U+3000 ideographic space", "\u3000"],
  ])("%s is whitespace", (_name, ch) => {
    expect(isWhitespace(ch)).toBe(true);
    expect(isBlank(`${ch}${ch}`)).toBe(true);
  });

  it.each([
    ["U+200B zero width space", "\u200b"],
    ["U+FEFF byte order mark", "\ufeff"],
    ["letter", "a"],
    ["emoji", "😀"],
  ])("%s is not whitespace", (_name, ch) => {
    expect(isWhitespace(ch)).toBe(false);
    expect(isBlank(` ${ch} `)).toBe(false);
  });

  it("treats the empty string as blank", () => {
    expect(isBlank("")).toBe(true);
  });
});

describe("trimTrailingWhitespace", () => {
  it("removes every trailing whitespace character, CRLF and Unicode spaces included", () => {
    expect(trimTrailingWhitespace("text \r\n\u00a0\u3000\n")).toBe("text");
  });
  it("keeps interior whitespace and a trailing astral character", () => {
    expect(trimTrailingWhitespace("a  b😀")).toBe("a  b😀");
    expect(trimTrailingWhitespace("a😀 \n")).toBe("a😀");
  });
  it("turns a whitespace-only string into the empty string", () => {
    expect(trimTrailingWhitespace(" \n\t\u0085")).toBe("");
  });
});

describe("counting", () => {
  it("counts code points, not UTF-16 units", () => {
    expect(codePointLength("héllo wörld 日本語")).toBe(15);
    expect(codePointLength("😀😀")).toBe(2);
    expect(codePointLength("a\r\n猫😀e\u0301\nlast")).toBe(12);
  });
  it("counts a lone surrogate as one code point", () => {
    expect(codePointLength("a\ud800b")).toBe(3);
  });
  it("measures size in UTF-8 bytes", () => {
    expect(utf8Length("a")).toBe(1);
    expect(utf8Length("é")).toBe(2);
    expect(utf8Length("日")).toBe(3);
    expect(utf8Length("😀")).toBe(4);
  });
});
