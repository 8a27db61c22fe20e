import DOMPurify from "dompurify";
import { textElement } from "./dom";
import { markdownHtml } from "./markdown-html";

// Plans are written by agents: the HTML marked makes of them is hostile until DOMPurify has removed
// every script, event handler, javascript: URL, form and style from it (STYLE.md habit 16). The
// page's CSP admits HTML into the DOM only through DOMPurify's Trusted Types policy, so this is the
// one place a plan's markup can reach the page. markdown-html.ts already shows a plan's raw HTML as
// text; the sanitizer is the second wall, and it also drops `id` and `name`, so that no element of a
// plan can take the name of one of the page's own (DOM clobbering).
const FORBID_TAGS = ["style", "form", "input", "button", "textarea", "select", "iframe", "object", "embed"];
const FORBID_ATTR = ["style", "id", "name"];

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  // A link in a plan opens elsewhere, without the console's address or a handle back to it.
  if (node.tagName === "A" && node.hasAttribute("href")) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer nofollow");
  }
});

/** The notice shown above a plan that could not be rendered as markdown. */
export const PLAIN_TEXT_NOTICE =
  "This plan could not be rendered as markdown (the parser gave up on it); it is shown as plain text.";

/**
 * The markdown `content` rendered and sanitized into `target` (its previous children replaced). It
 * never throws: content the parser gives up on is shown as plain text, with a notice, so one plan
 * cannot stop the page from listing revisions or following the watch.
 */
export function renderMarkdown(target: HTMLElement, content: string): void {
  try {
    const clean = DOMPurify.sanitize(markdownHtml(content), {
      RETURN_TRUSTED_TYPE: true,
      FORBID_TAGS,
      FORBID_ATTR,
    });
    // TrustedHTML is what the policy lets innerHTML take (require-trusted-types-for 'script').
    target.innerHTML = clean as unknown as string;
  } catch {
    target.replaceChildren(
      textElement("p", PLAIN_TEXT_NOTICE, "plain-text-notice"),
      textElement("pre", content, "plain-text"),
    );
  }
}
