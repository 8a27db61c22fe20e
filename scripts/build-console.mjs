// Builds the plan console (docs/console.md) into dist/console: the page's TypeScript bundled by esbuild
// into one script, beside its HTML and CSS, which src/console/serve.ts serves as files. Run by
// `npm run build`; takes well under a second. The bundle is self-contained: the page loads nothing else.
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const page = join(root, "src", "console", "page");
const out = join(root, "dist", "console");

mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(page, "main.ts")],
  outfile: join(out, "console.js"),
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  minify: true,
  sourcemap: false,
  legalComments: "eof",
  logLevel: "warning",
  // `paths` point the page at the contract's protobuf-es descriptors only (src/console/page/contract.ts).
  tsconfig: join(root, "tsconfig.console.json"),
});
for (const file of ["index.html", "console.css", "favicon.svg"])
  copyFileSync(join(page, file), join(out, file));
