import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

// The README is the front door and docs/ the reference: every relative link in them, in the
// benchmarks' notes and in the workspaces' READMEs names a file or directory that exists (a link to
// a moved section must follow it), and the README links to every document of docs/.
const ROOT = join(__dirname, "..", "..", "..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");

function markdownUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return markdownUnder(path);
    return name.endsWith(".md") ? [path] : [];
  });
}
const docs = markdownUnder("docs");
const documents = [
  "README.md",
  ...docs,
  ...markdownUnder("bench"),
  "generated/README.md",
  "clients/ts/README.md",
  "mcp/README.md",
];

function relativeLinks(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map(([, target]) => (target ?? "").split("#")[0] ?? "")
    .filter((target) => target !== "" && !/^[a-z]+:/i.test(target));
}

describe("the README and docs/", () => {
  it("keep the README a front door: a few screens, with the reference in docs/", () => {
    const lines = README.split("\n").length;
    expect(lines).toBeGreaterThan(150);
    expect(lines).toBeLessThanOrEqual(260);
    expect(docs.length).toBeGreaterThan(8);
  });

  it("the README links to every document of docs/ (each decision through the decisions' index)", () => {
    const linked = new Set(relativeLinks("README.md"));
    const indexes = docs.filter((path) => !path.startsWith("docs/decisions/") || path.endsWith("README.md"));
    expect(indexes.filter((path) => !linked.has(path))).toEqual([]);
    const decisions = new Set(relativeLinks("docs/decisions/README.md"));
    const records = docs.filter((path) => path.startsWith("docs/decisions/0"));
    expect(records.filter((path) => !decisions.has(path.slice("docs/decisions/".length)))).toEqual([]);
  });

  it("every `npm run` script the README names exists", () => {
    const scripts = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: object })
      .scripts;
    const named = [...README.matchAll(/\bnpm run ([\w:-]+)/g)].map(([, name]) => name ?? "");
    expect(named.length).toBeGreaterThan(3);
    expect(named.filter((name) => !(name in scripts))).toEqual([]);
  });

  it.each(documents)("%s links only to files that exist", (file) => {
    const missing = relativeLinks(file).filter((target) => !existsSync(join(ROOT, dirname(file), target)));
    expect(missing).toEqual([]);
  });
});
