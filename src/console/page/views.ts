import { checklistProgress } from "../../plans/rules/checklist-progress";
import type { ShownError } from "./api";
import type { PlanDiffView, PlanView, RevisionView } from "./contract";
import { agentText, textElement, ui } from "./dom";
import { renderMarkdown } from "./markdown";
import {
  diffLines,
  diffSummary,
  formatBytes,
  formatTime,
  progressLabel,
  revisionRows,
  shownProgress,
} from "./view-model";

// Everything the page shows of a plan, its revisions and diffs. Agent text (titles, authors, diff
// lines) goes in as text, titles and authors isolated (agentText); only markdown.ts renders HTML,
// sanitized. Every element is one the page found at start-up (dom.ts `ui`), never one looked up by
// id later, which a plan's element could shadow.

/** Shows `error` (or hides the error box when null). */
export function showError(error: ShownError | null): void {
  ui.error.hidden = error === null;
  ui.errorCode.textContent = error?.code ?? "";
  ui.errorReason.textContent = error?.reason ?? "";
  ui.errorMessage.textContent = error?.message ?? "";
  ui.errorNext.textContent = error?.nextAction ? `Next: ${error.nextAction}` : "";
}

/** The status line (what the page is doing, whether it is live): text, and agent text as agentText. */
export function showStatus(...parts: (string | Node)[]): void {
  ui.status.replaceChildren(...parts);
}

/**
 * The plan: title, version, checklist progress ("3 of 7 done", when it has task-list items) and size,
 * and its content rendered (null: the task has no plan). The progress is the one the service counted
 * when the plan was written (plan.checklist); a plan written before it counted shows the progress
 * counted here from the content shown, by the rules it is rendered with (checklistProgress).
 */
export function showPlan(plan: PlanView | null): void {
  ui.task.hidden = false;
  ui.planTitle.replaceChildren(plan ? agentText(plan.title) : "No plan");
  const progress = plan
    ? progressLabel(shownProgress(plan.checklist, () => checklistProgress(plan.content)))
    : null;
  ui.planMeta.textContent = plan
    ? `version ${plan.version} · ${progress ? `${progress} · ` : ""}${formatBytes(plan.contentBytes)} · ` +
      `${plan.contentChars} characters · updated ${formatTime(plan.updatedAt)} · revision #${plan.latestRevisionNumber}`
    : "the task has no plan (yet, or it was deleted)";
  renderMarkdown(ui.planContent, plan ? plan.content : "");
}

/** The revision list; `onView` opens one revision's content. */
export function showRevisions(revisions: readonly RevisionView[], onView: (id: string) => void): void {
  const body = ui.revisionRows;
  // A refresh (a live write) keeps the revisions chosen for the diff when they are still listed.
  const kept = chosenRevisions();
  const listed = new Set(revisions.map((r) => r.id));
  const keep = kept !== null && listed.has(kept.from) && listed.has(kept.to);
  body.replaceChildren();
  revisionRows(revisions).forEach((row, index) => {
    const tr = document.createElement("tr");
    tr.dataset.revision = row.number;
    for (const [name, checked] of [
      ["from", keep ? row.id === kept.from : index === 1 || (index === 0 && revisions.length === 1)],
      ["to", keep ? row.id === kept.to : index === 0],
    ] as const) {
      const cell = document.createElement("td");
      const radio = document.createElement("input");
      radio.type = "radio";
      radio.name = name;
      radio.value = row.id;
      radio.checked = checked;
      radio.setAttribute("aria-label", `${name} revision ${row.number}`);
      cell.append(radio);
      tr.append(cell);
    }
    tr.append(textElement("td", row.number));
    const author = document.createElement("td");
    author.append(agentText(row.author));
    tr.append(author);
    for (const value of [row.kind, row.time, row.size]) tr.append(textElement("td", value));
    const markers = document.createElement("td");
    for (const marker of row.markers) markers.append(textElement("span", marker, "marker"));
    tr.append(markers);
    tr.append(textElement("td", row.checklist));
    const view = textElement("button", "view");
    view.addEventListener("click", () => onView(row.id));
    const viewCell = document.createElement("td");
    viewCell.append(view);
    tr.append(viewCell);
    body.append(tr);
  });
}

/** The ids of the revisions chosen as the diff's old (from) and new (to) sides, in the page's own list. */
export function chosenRevisions(): { from: string; to: string } | null {
  const from = ui.revisionRows.querySelector<HTMLInputElement>('input[name="from"]:checked')?.value;
  const to = ui.revisionRows.querySelector<HTMLInputElement>('input[name="to"]:checked')?.value;
  return from && to ? { from, to } : null;
}

/** A diff between two revisions, line by line, as text. */
export function showDiff(fromNumber: string, toNumber: string, diff: PlanDiffView): void {
  ui.diffSection.hidden = false;
  ui.diffTitle.textContent = `Diff #${fromNumber} → #${toNumber}`;
  ui.diffSummary.textContent =
    diff.unifiedDiff === "" ? "the two revisions hold the same content" : diffSummary(diff);
  ui.diff.replaceChildren(
    ...diffLines(diff.unifiedDiff).map((line) => textElement("span", line.text, `diff-${line.kind}`)),
  );
}

/** One revision's content, rendered like the plan. */
export function showRevision(revision: RevisionView & { content: string; title: string }): void {
  ui.revisionSection.hidden = false;
  ui.revisionTitle.replaceChildren(
    `Revision #${revision.revisionNumber}: `,
    agentText(revision.title),
    " (by ",
    agentText(revision.authorName),
    ")",
  );
  renderMarkdown(ui.revisionContent, revision.content);
}
