/**
 * Every agent-facing text of the MCP tools, in one place so that tests can scan them all
 * (AC-TASKS-PLAN-APPEND-006.1 to 006.9 and seed 003). Tool names are plain; a host prefixes them.
 */

const VERSION_WHY =
  "expected_version is required: the version from your last get_task_plan or from the acknowledgement of your last write, so that the write never silently discards changes made since (by people or other agents).";

export const texts = {
  getPlan: {
    description:
      "Read the task's current plan, including edits people made. Returns two blocks: metadata as JSON (version, sizes in bytes and characters, latest revision number, checklist progress: checklist.checked of checklist.total task-list items ticked) and the content. For a large plan, offset and limit (in characters) read one part.",
    offset: "First character to return (default 0).",
    limit: "Most characters to return, 1 to 65,536 (default: to the end).",
  },
  createPlan: {
    description:
      'Create the task\'s plan. This tool always writes the whole document: if a plan exists, it replaces it only when expected_version is the current version. To add a section to an existing plan, use update_task_plan with mode="append", which sends only the new section.',
    content: "The complete plan (markdown), at most 262,144 UTF-8 bytes; over the limit nothing is stored.",
    mode: 'Not supported by this tool: any value is rejected. To add a section, call update_task_plan with mode="append".',
    expectedVersion: `Only to replace an existing plan: ${VERSION_WHY}`,
  },
  updatePlan: {
    description: [
      'Write the task\'s plan in one of two modes, "replace" (the default when mode is omitted) or "append".',
      'mode="replace" submits the whole document. It overwrites the entire plan: sending only a section deletes the rest, so send the complete document.',
      `A replace needs ${VERSION_WHY}`,
      'mode="append" submits only the addition: the server stores the current plan, one blank line, then your content. Append does not require reading the plan first and needs no expected_version.',
      "An append is not idempotent: resubmitting it adds the content again (repeat the same request_id to retry safely).",
      "A replace that keeps less than half of a plan of 2,000 or more characters is rejected before anything is stored, unless acknowledge_reduction is true.",
      "For a small change to existing text, edit_task_plan sends less.",
    ].join(" "),
    content:
      'mode="replace": the complete new document. mode="append": only the addition. The 262,144-byte limit applies to the stored document, after an append.',
    mode: '"replace" (default) or "append", exactly; any other value is rejected and the plan is left unchanged.',
    expectedVersion: `Required for mode="replace"; optional for append (checked when given). ${VERSION_WHY}`,
    merge:
      'mode="replace" only, with expected_version: if others changed the plan since that version, merge your document with their changes instead of refusing with VERSION_MISMATCH (their lines are always kept). If both changed the same lines, nothing is written (MERGE_CONFLICT) and the answer shows the conflicting lines. An append never needs it.',
  },
  editPlan: {
    description: `Replace one exact occurrence of old_text in the current plan with new_text (an empty new_text deletes it). Nothing is normalized: copy old_text exactly, whitespace and line endings included. old_text must occur exactly once. ${VERSION_WHY} With merge=true, a stale expected_version is merged instead of refused: old_text is looked for in the version you read.`,
    oldText: "Exact text to replace; must occur exactly once in the current plan.",
    newText: "Replacement text; an empty string deletes old_text.",
  },
  getChanges: {
    description:
      "Read only what changed in the task's plan since a version you read, instead of the whole plan: the current version (pass it as expected_version next), sizes, who changed it in between, and a unified diff (lines starting with - were removed, + added). Use it after a write is refused with VERSION_MISMATCH. If that version's history is gone, it says so: then read the whole plan with get_task_plan.",
    sinceVersion:
      "The version you last read or wrote (from get_task_plan, a write's acknowledgement, or the expected_version a refused write sent).",
  },
  listRevisions: {
    description:
      "List the plan's revisions, newest first, without content: number, author, sizes, revision_version. Use get_task_plan_revision to read one.",
  },
  getRevision: {
    description:
      "Read one past revision of the plan: metadata as JSON (including revision_version) and its content. Use it to recover content a replacement removed.",
  },
  restoreRevision: {
    description: `Make a past revision the current plan again, as a new revision. Needs both expected_version (the plan's current version, from a prior read or write) and expected_revision_version (from list_task_plan_revisions or get_task_plan_revision), so a restore never silently replaces work done since you looked. If the plan already equals the revision, nothing is written.`,
  },
  deletePlan: {
    description:
      "Delete the task's plan; its revisions are kept. With expected_version it deletes only an unchanged plan.",
    expectedVersion: "Optional: delete only if this is still the plan's current version.",
  },
  common: {
    taskId:
      "Task id; defaults to the task this server was started for. Another task must be reachable with your credentials.",
    title: "Plan title; kept when omitted.",
    acknowledgeReduction:
      "Set only to store a replacement that intentionally removes more than half of a large plan; the prior content stays in the revision history.",
    requestId:
      "Optional id to make a retry safe: the same request_id with the same arguments is applied once.",
    revisionId: "Revision id, from list_task_plan_revisions.",
    versionRequired: `Required. ${VERSION_WHY}`,
    expectedRevisionVersion: "revision_version of the revision, as you read it.",
    pageSize: "Revisions per page, 1 to 100 (default 20).",
    pageToken: "next_page_token from the previous page.",
    merge:
      "Optional, with expected_version: if others changed the plan since that version, merge your change with theirs instead of refusing with VERSION_MISMATCH (their lines are always kept). If both changed the same lines, nothing is written (MERGE_CONFLICT) and the answer shows the conflicting lines.",
  },
  resources: {
    plan: "The task's plan (markdown), exactly as stored. _meta.version is the version to pass as expected_version when you replace or edit it with the plan tools.",
    template:
      "Any task's plan by its id (percent-encoded). Reading a plan the task does not have, or a task you cannot reach, is resource not found (-32002).",
  },
  recovery: {
    historyGoneRead: "Read the whole plan with get_task_plan and use its version from now on.",
    historyGoneWrite:
      "Read the whole plan with get_task_plan, apply your change to that content, and retry with its version.",
    /** COMMIT_OUTCOME_UNKNOWN: the write may have been applied; only the same request_id is a safe retry. */
    commitOutcomeUnknown:
      "The change may already be in the plan. Call this tool again with exactly the same arguments and the same request_id, never a new one (it is then applied once, or answered with the first result); if you gave no request_id, read the plan with get_task_plan first and write again only if your change is missing.",
  },
} as const;

/** The next action after a VERSION_MISMATCH of a write that can merge (`since`: the version it sent, when known). */
export function staleVersionAction(since: number | undefined): string {
  const from = since === undefined ? " set to the expected_version you sent" : `=${since}`;
  return `Call get_task_plan_changes with since_version${from} for only what changed, redo your change and retry with the version it gives; or retry with merge=true.`;
}

/** The next action after a MERGE_CONFLICT, in tool names. */
export function mergeConflictAction(baseVersion: string, currentVersion: string): string {
  return `Call get_task_plan_changes with since_version=${baseVersion} to see what others changed, redo your change on the current content, and retry with expected_version=${currentVersion}. Do not rewrite the plan from memory.`;
}

/** The block listing a MERGE_CONFLICT's conflicting regions (bounded by the service). */
export function conflictRegions(regions: string, conflicts: string): string {
  return `Conflicting regions (${regions}): your lines after "<<<<<<< yours", the lines you read after "||||||| base", the current lines after "=======".\n${conflicts}`;
}

/**
 * What an acknowledgement adds when the service merged a stale write (`reapplied`: an edit whose
 * old_text still occurred exactly once, applied to the current plan instead of line-merged).
 */
export function mergedNote(fromVersion: number, toVersion: number, reapplied = false): string {
  const others =
    fromVersion + 1 === toVersion ? `version ${toVersion}` : `versions ${fromVersion + 1}..${toVersion}`;
  const how = reapplied
    ? " Your old_text still occurred exactly once, so your edit was applied to the current plan."
    : "";
  return `Merged: your change was based on version ${fromVersion}; the changes others made in ${others} were kept (merged over versions ${fromVersion}..${toVersion}).${how} Read them with get_task_plan_changes since_version=${fromVersion} if you need them.`;
}

/**
 * What an acknowledgement says of the plan's checklist after a write, " Checklist: 2 of 3 items
 * done." (issue 56, item 3: the progress the service counted), or "" when the answer carries no
 * progress (a plan not counted yet) or the plan has no checklist. Short: acknowledgements are
 * measured in bytes (npm run bench:changes).
 */
export function checklistNote(progress: { checked: number; total: number } | undefined): string {
  return progress?.total ? ` Checklist: ${progress.checked} of ${progress.total} items done.` : "";
}

/** The acknowledged-reduction warning (REQ-006.7/006.8, updated by seed 003). */
export function reductionWarning(priorChars: number, newChars: number, priorRevisionNumber: number): string {
  const dropped = priorChars - newChars;
  const percent = Math.round((dropped / priorChars) * 100);
  return [
    `WARNING: this replace kept ${newChars} of ${priorChars} characters (dropped ${dropped}, ${percent}%).`,
    'To add a section next time, use update_task_plan with mode="append", which sends only the addition.',
    `The previous content is preserved in plan revision ${priorRevisionNumber}: read it with get_task_plan_revision and, if the reduction was not intended, restore it with restore_task_plan_revision.`,
    "Do not rewrite the plan from memory.",
  ].join(" ");
}
