import DOMPurify from "dompurify";
import { textElement } from "./dom";
import { markdownHtml, TASK_BOX_CLASS, TASK_DONE_CLASS } from "./markdown-html";

// Plans are written by agents: the HTML marked makes of them is hostile until DOMPurify has removed
// every script, event handler, javascript: URL, form and style from it (STYLE.md habit 16). The
// page's CSP admits HTML into the DOM only through DOMPurify's Trusted Types policy, so this is the
// one place a plan's markup can reach the page. markdown-html.ts already shows a plan's raw HTML as
// text; the sanitizer is the second wall, and it also drops `id` and `name`, so that no element of a
// plan can take the name of one of the page's own (DOM clobbering). No <input> passes it, of any
// type: a task-list item's box is made here, after sanitizing, from the placeholder markdown-html.ts
// renders for marked's checkbox token (taskBoxes), so the only inputs in a plan are disabled
// checkboxes carrying `type`, `disabled` and `checked`, and nothing a plan wrote.
const FORBID_TAGS = ["style", "form", "input", "button", "textarea", "select", "iframe", "object", "embed"];
const FORBID_ATTR = ["style", "id", "name"];

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  // A link in a plan opens elsewhere, without the console's address or a handle back to it.
  if (node.tagName === "A" && node.hasAttribute("href")) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer nofollow");
  }
});

/**
 * Each task-list placeholder under `root` replaced with the box it stands for: a new
 * `<input type="checkbox" disabled>`, `checked` when the item is ticked, with no other attribute.
 * Only marked's checkbox renderer makes such a placeholder (a plan's raw HTML is text); were one
 * forged, it would give the same harmless box.
 */
function taskBoxes(root: HTMLElement): void {
  for (const placeholder of root.querySelectorAll(`span.${TASK_BOX_CLASS}`)) {
    const box = document.createElement("input");
    box.type = "checkbox";
    box.disabled = true;
    // defaultChecked is the `checked` attribute (what a reader of the markup sees), checked the state.
    box.defaultChecked = placeholder.classList.contains(TASK_DONE_CLASS);
    box.checked = box.defaultChecked;
    placeholder.replaceWith(box);
  }
}

/** The notice shown above a plan that could not be rendered as markdown. */
export const PLAIN_TEXT_NOTICE =
  "This plan could not be rendered as markdown (the parser gave up on it); it is shown as plain text.";

/**
 * The markdown `content` rendered and sanitized into `target` (its previous children replaced), its
 * task-list items shown as disabled checkboxes with their state. It never throws: content the parser
 * gives up on is shown as plain text, with a notice, so one plan cannot stop the page from listing
 * revisions or following the watch.
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
    taskBoxes(target);
  } catch {
    target.replaceChildren(
      textElement("p", PLAIN_TEXT_NOTICE, "plain-text-notice"),
      textElement("pre", content, "plain-text"),
    );
  }
}
