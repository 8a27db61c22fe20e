import { Code, ConnectError } from "@connectrpc/connect";
import { planClient, shownError } from "./api";
import { PlanChangeKind, type PlanView, type RevisionView } from "./contract";
import { agentText, ui } from "./dom";
import { taskIdFromHash, writerName } from "./view-model";
import {
  chosenRevisions,
  showDiff,
  showError,
  showPlan,
  showRevision,
  showRevisions,
  showStatus,
} from "./views";

// The plan console (docs/console.md): read-only. Opens a task's plan, lists its revisions, diffs two
// of them, and follows the plan live through WatchPlan. One task at a time: opening another stops
// the previous watch.

type PlanClient = ReturnType<typeof planClient>;

interface Opened {
  readonly taskId: string;
  readonly client: PlanClient;
  readonly stop: AbortController;
  revisions: RevisionView[];
  nextPageToken: string;
}

let opened: Opened | null = null;

function fail(error: unknown): void {
  showError(shownError(error));
}

async function loadRevisions(state: Opened, older = false): Promise<void> {
  const page = await state.client.listPlanRevisions({
    taskId: state.taskId,
    pageSize: 100,
    pageToken: older ? state.nextPageToken : "",
  });
  state.revisions = older ? [...state.revisions, ...page.revisions] : page.revisions;
  state.nextPageToken = page.nextPageToken;
  ui.loadOlder.hidden = page.nextPageToken === "";
  showRevisions(state.revisions, (id) => void viewRevision(state, id));
}

async function viewRevision(state: Opened, revisionId: string): Promise<void> {
  try {
    const { revision } = await state.client.getPlanRevision({ taskId: state.taskId, revisionId });
    if (revision) showRevision(revision);
  } catch (error) {
    fail(error);
  }
}

async function diffChosen(state: Opened): Promise<void> {
  const chosen = chosenRevisions();
  if (!chosen) return;
  try {
    const answer = await state.client.diffPlanRevisions({
      taskId: state.taskId,
      fromRevisionId: chosen.from,
      toRevisionId: chosen.to,
    });
    if (answer.diff)
      showDiff(
        String(answer.fromRevision?.revisionNumber ?? ""),
        String(answer.toRevision?.revisionNumber ?? ""),
        answer.diff,
      );
    showError(null);
  } catch (error) {
    fail(error);
  }
}

const FINAL_WATCH_CODES = new Set([
  Code.Unauthenticated,
  Code.PermissionDenied,
  Code.NotFound,
  Code.InvalidArgument,
]);

/** Follows the plan from `afterVersion` (undefined: from a snapshot) until the page opens another task. */
async function follow(state: Opened, afterVersion: bigint | undefined): Promise<void> {
  let version = afterVersion;
  // open() listed the revisions just before the first watch, so its snapshot (a task without a plan)
  // needs no new list; a later snapshot (a resume point that expired) may follow writes the page
  // missed, and lists them again.
  let first = true;
  while (!state.stop.signal.aborted) {
    try {
      showStatus(`live: watching ${state.taskId}`);
      const changes = state.client.watchPlan(
        { taskId: state.taskId, afterVersion: version, includeContent: true },
        { signal: state.stop.signal },
      );
      for await (const change of changes) {
        const plan: PlanView | null = change.kind === PlanChangeKind.DELETED ? null : (change.plan ?? null);
        if (change.plan) version = change.plan.version;
        showPlan(plan);
        const at = ` at ${new Date().toISOString().slice(11, 19)} UTC`;
        const writer = writerName(change);
        if (writer !== null) showStatus(`live: version ${version ?? 0} by `, agentText(writer), at);
        else showStatus(`live: version ${version ?? 0}${at}`);
        if (change.kind !== PlanChangeKind.SNAPSHOT || !first) await loadRevisions(state);
      }
    } catch (error) {
      if (state.stop.signal.aborted) return;
      const reason = shownError(error);
      const code = ConnectError.from(error).code;
      // Refusals a retry cannot cure (the token, the reach, a deleted task) end the watch, shown.
      if (FINAL_WATCH_CODES.has(code)) {
        showStatus(`watch ended (${reason.code} ${reason.reason})`);
        return fail(error);
      }
      // An expired resume point: read the plan again from a snapshot.
      if (code === Code.OutOfRange) version = undefined;
      showStatus(`watch interrupted (${reason.code} ${reason.reason}); retrying in 3 s`);
    }
    first = false;
    await new Promise((resolve) => setTimeout(resolve, 3000));
  }
}

async function open(taskId: string, token: string): Promise<void> {
  opened?.stop.abort();
  const state: Opened = {
    taskId,
    client: planClient(token),
    stop: new AbortController(),
    revisions: [],
    nextPageToken: "",
  };
  opened = state;
  showError(null);
  showStatus(`reading ${taskId}`);
  try {
    const { plan } = await state.client.getPlan({ taskId });
    showPlan(plan ?? null);
    await loadRevisions(state);
    void follow(state, plan?.version);
  } catch (error) {
    // A task without a plan (yet): shown as one, as a deleted plan is, not as a refusal (an error box
    // would stay beside the plan once it is created); watched from a snapshot, so its creation shows.
    if (ConnectError.from(error).code === Code.NotFound && shownError(error).reason === "PLAN_NOT_FOUND") {
      showPlan(null);
      await loadRevisions(state).catch(() => undefined);
      void follow(state, undefined);
    } else {
      fail(error);
      showStatus("");
    }
  }
}

function start(): void {
  const { taskInput, tokenInput } = ui;
  ui.openForm.addEventListener("submit", (event) => {
    event.preventDefault();
    void open(taskInput.value.trim(), tokenInput.value.trim());
  });
  ui.showDiff.addEventListener("click", () => opened && void diffChosen(opened));
  ui.loadOlder.addEventListener("click", () => opened && void loadRevisions(opened, true).catch(fail));
  const fromHash = taskIdFromHash(window.location.hash);
  if (fromHash !== "") {
    taskInput.value = fromHash;
    // With auth on the first call is refused until a token is entered: the error says so.
    void open(fromHash, "");
  }
}

start();
