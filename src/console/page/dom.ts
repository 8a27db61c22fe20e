/** The element with `id`, which the page's HTML (index.html) always has. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`the console page has no #${id}`);
  return element as T;
}

/** A new element holding `text` as text (never parsed as HTML), with an optional class. */
export function textElement(tag: string, text: string, className?: string): HTMLElement {
  const element = document.createElement(tag);
  element.textContent = text;
  if (className) element.className = className;
  return element;
}
