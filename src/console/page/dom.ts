import { visibleBidiControls } from "./view-model";

/** The element with `id`, which the page's HTML (index.html) always has. */
function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`the console page has no #${id}`);
  return element as T;
}

/** The page's own elements (index.html), found once. */
export interface PageElements {
  readonly openForm: HTMLFormElement;
  readonly taskInput: HTMLInputElement;
  readonly tokenInput: HTMLInputElement;
  readonly status: HTMLElement;
  readonly error: HTMLElement;
  readonly errorCode: HTMLElement;
  readonly errorReason: HTMLElement;
  readonly errorMessage: HTMLElement;
  readonly errorNext: HTMLElement;
  readonly task: HTMLElement;
  readonly planTitle: HTMLElement;
  readonly planMeta: HTMLElement;
  readonly planContent: HTMLElement;
  /** The revision list's rows (the tbody of #revisions). */
  readonly revisionRows: HTMLTableSectionElement;
  readonly showDiff: HTMLButtonElement;
  readonly loadOlder: HTMLButtonElement;
  readonly diffSection: HTMLElement;
  readonly diffTitle: HTMLElement;
  readonly diffSummary: HTMLElement;
  readonly diff: HTMLElement;
  readonly revisionSection: HTMLElement;
  readonly revisionTitle: HTMLElement;
  readonly revisionContent: HTMLElement;
}

function findElements(): PageElements {
  const table = byId<HTMLTableElement>("revisions");
  const revisionRows = table.tBodies[0];
  if (!revisionRows) throw new Error("the console page's #revisions has no tbody");
  return {
    openForm: byId<HTMLFormElement>("open-form"),
    taskInput: byId<HTMLInputElement>("task-id"),
    tokenInput: byId<HTMLInputElement>("token"),
    status: byId("status"),
    error: byId("error"),
    errorCode: byId("error-code"),
    errorReason: byId("error-reason"),
    errorMessage: byId("error-message"),
    errorNext: byId("error-next"),
    task: byId("task"),
    planTitle: byId("plan-title"),
    planMeta: byId("plan-meta"),
    planContent: byId("plan-content"),
    revisionRows,
    showDiff: byId<HTMLButtonElement>("show-diff"),
    loadOlder: byId<HTMLButtonElement>("load-older"),
    diffSection: byId("diff-section"),
    diffTitle: byId("diff-title"),
    diffSummary: byId("diff-summary"),
    diff: byId("diff"),
    revisionSection: byId("revision-section"),
    revisionTitle: byId("revision-title"),
    revisionContent: byId("revision-content"),
  };
}

/**
 * The page's elements, found by id once, when the module first runs: before any plan is rendered,
 * so an element a plan renders can never be taken for one of them (DOM clobbering), even if it
 * carried one of their ids. Nothing on the page looks an element up by id after this.
 */
export const ui: PageElements = findElements();

/** A new element holding `text` as text (never parsed as HTML), with an optional class. */
export function textElement(tag: string, text: string, className?: string): HTMLElement {
  const element = document.createElement(tag);
  element.textContent = text;
  if (className) element.className = className;
  return element;
}

/**
 * Agent text (a title, an author name) isolated from the text around it: a <bdi> (its own direction,
 * `unicode-bidi: isolate`) holding the text with its bidi controls shown as `[U+202E]` and the like,
 * so a right-to-left override can reverse neither the text around it nor the name itself.
 */
export function agentText(text: string): HTMLElement {
  return textElement("bdi", visibleBidiControls(text), "agent-text");
}
