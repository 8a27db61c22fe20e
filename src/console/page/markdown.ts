import DOMPurify from "dompurify";
import { marked } from "marked";

// Plans are written by agents: the HTML marked makes of them is hostile until DOMPurify has removed
// every script, event handler, javascript: URL, form and style from it (STYLE.md habit 16). The
// page's CSP admits HTML into the DOM only through DOMPurify's Trusted Types policy, so this is the
// one place a plan's markup can reach the page.
const FORBID_TAGS = ["style", "form", "input", "button", "textarea", "select", "iframe", "object", "embed"];

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  // A link in a plan opens elsewhere, without the console's address or a handle back to it.
  if (node.tagName === "A" && node.hasAttribute("href")) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer nofollow");
  }
});

/** The markdown `content` rendered and sanitized into `target` (its previous children replaced). */
export function renderMarkdown(target: HTMLElement, content: string): void {
  const html = marked.parse(content, { async: false, gfm: true });
  const clean = DOMPurify.sanitize(html, {
    RETURN_TRUSTED_TYPE: true,
    FORBID_TAGS,
    FORBID_ATTR: ["style"],
  });
  // TrustedHTML is what the policy lets innerHTML take (require-trusted-types-for 'script').
  target.innerHTML = clean as unknown as string;
}
