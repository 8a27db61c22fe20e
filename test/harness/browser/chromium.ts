import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { repoRoot } from "../servers/repo-root";

/** Debian's Chromium, which scripts/test.sh installs (playwright-core downloads no browser of its own). */
export const CHROMIUM = "/usr/bin/chromium";

/** Starts headless Chromium; as root (containers, CI) without its sandbox, which needs a user namespace. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: run 'npm test' (scripts/test.sh installs it) or 'apt-get install chromium'`,
    );
  const asRoot = process.getuid?.() === 0;
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: asRoot ? ["--no-sandbox"] : [],
  });
}

/** The directory a suite saves its screenshots in (var/artifacts/<suite>, ignored by git), created. */
export function artifactsDir(suite: string): string {
  const dir = join(repoRoot(), "var", "artifacts", suite);
  mkdirSync(dir, { recursive: true });
  return dir;
}
