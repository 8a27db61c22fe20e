import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

// The README is the front door and docs/ the reference: every relative link in them names a file or
// directory that exists (a link to a moved section must follow it).
const ROOT = join(__dirname, "..", "..");
const documents = ["README.md", ...readdirSync(join(ROOT, "docs")).map((name) => join("docs", name))];

function relativeLinks(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map(([, target]) => (target ?? "").split("#")[0] ?? "")
    .filter((target) => target !== "" && !/^[a-z]+:/i.test(target));
}

describe("the README and docs/", () => {
  it("keep the README a front door: short, with the reference in docs/", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    expect(readme.split("\n").length).toBeLessThan(150);
    expect(documents.length).toBeGreaterThan(3);
  });

  it.each(documents)("%s links only to files that exist", (file) => {
    const missing = relativeLinks(file).filter((target) => !existsSync(join(ROOT, dirname(file), target)));
    expect(missing).toEqual([]);
  });
});
