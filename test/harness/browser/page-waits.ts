import type { Page } from "playwright-core";

// Page code is written as expressions in strings: the tests are type-checked for Node, without the
// DOM's globals. Page.evaluate runs them through the DevTools protocol, which the page's CSP allows.

/**
 * Waits until the element `selector` holds `text` in its text (not its HTML), polling from the test:
 * Playwright's waitForFunction would compile the probe in the page, which the page's CSP forbids.
 */
export async function waitForText(
  page: Page,
  selector: string,
  text: string,
  timeout = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeout;
  let seen: string | null = null;
  while (Date.now() < deadline) {
    seen = await page.textContent(selector, { timeout: 1_000 }).catch(() => null);
    if (seen?.includes(text)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(
    `${selector} did not show ${JSON.stringify(text)} within ${timeout} ms; it shows ${JSON.stringify(seen)}`,
  );
}

/** The value of a `window` property of the page (e.g. a flag a payload would set). */
export function windowFlag(page: Page, name: string): Promise<unknown> {
  return page.evaluate(`window[${JSON.stringify(name)}]`);
}

/** The text of every element matching `selector`, in order (trimmed when `trim`). */
export function texts(page: Page, selector: string, trim = false): Promise<string[]> {
  return page.$$eval(
    selector,
    (elements, trimmed) =>
      elements.map((element) => (trimmed ? (element.textContent ?? "").trim() : (element.textContent ?? ""))),
    trim,
  );
}

/** What a page threw or logged as an error while a test used it. */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(`uncaught: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`console: ${message.text()}`);
  });
  return errors;
}
