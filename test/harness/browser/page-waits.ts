import type { Page } from "playwright-core";

// Page code is written as expressions in strings: the tests are type-checked for Node, without the
// DOM's globals, and a string runs in the page exactly as a function would.

/** Waits until the element `selector` holds `text` in its text (not its HTML). */
export async function waitForText(
  page: Page,
  selector: string,
  text: string,
  timeout = 15_000,
): Promise<void> {
  const probe = `(document.querySelector(${JSON.stringify(selector)})?.textContent ?? "").includes(${JSON.stringify(text)})`;
  await page.waitForFunction(probe, undefined, { timeout });
}

/** The value of a `window` property of the page (e.g. a flag a payload would set). */
export function windowFlag(page: Page, name: string): Promise<unknown> {
  return page.evaluate(`window[${JSON.stringify(name)}]`);
}

/** The text of every element matching `selector`, in order. */
export function texts(page: Page, selector: string): Promise<string[]> {
  return page.$$eval(selector, (elements) => elements.map((element) => element.textContent ?? ""));
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
