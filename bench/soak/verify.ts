import type { Clients } from "../../test/harness/calls/rpc";
import type { SoakTask } from "./tasks";
import type { LoadContext } from "./types";

const NOT_FOUND = 5;

/**
 * The final check of one task, with nothing in flight on it (also run on each ledger and contended
 * task before the soak deletes it):
 * - ledger: the plan is exactly the acknowledged fragments composed in order (a missing one named);
 * - mixed: the plan is the content of the last acknowledged write (or absent after a plan delete),
 *   its revision numbers run gap-free from the newest down to 1, and the newest revision holds HEAD;
 * - contended: every acknowledged fragment is in the plan exactly once, each writer's in order, a
 *   fragment of unknown outcome at most once, and nothing the soak never sent.
 */
export async function verifyTask(ctx: LoadContext, task: SoakTask): Promise<void> {
  const deleted = task.content === null && task.soleWriter;
  let response;
  try {
    response = await ctx.calls.run(
      "GetPlan (verify)",
      (c) => c.plans.getPlan({ taskId: task.id }),
      (failure) => deleted && failure.code === NOT_FOUND,
    );
  } catch (error) {
    if (deleted) return;
    throw error;
  }
  const plan = response.plan;
  const content = plan?.content ?? "";
  const version = Number(plan?.version ?? 0);
  const lost = (message: string) => ctx.findings.add("lost-write", `${task.id} (${task.kind}): ${message}`);
  if (task.kind === "ledger") {
    if (deleted || content !== task.content || version !== task.version) {
      lost(`${describeLedgerLoss(task, content)}; plan version ${version}, acknowledged ${task.version}`);
    }
    return;
  }
  if (task.kind === "mixed") {
    if (deleted)
      return lost(`plan exists (version ${version}) though its last acknowledged write deleted it`);
    if (content !== task.content || version !== task.version) {
      return lost(
        `plan version ${version} (${plan?.contentBytes} bytes) is not the last acknowledged write (version ${task.version})`,
      );
    }
    await verifyHistory(ctx, task, content, Number(plan?.latestRevisionNumber ?? 0));
    return;
  }
  const found = new Map<string, number[]>();
  for (const match of content.matchAll(/⟦([^⟧]+)⟧/g)) {
    const marker = match[0];
    found.set(marker, [...(found.get(marker) ?? []), match.index ?? 0]);
  }
  const lastPosition = new Map<number, number>();
  const ordered = [...task.markers.entries()].sort(
    (a, b) => a[1].writer - b[1].writer || a[1].seq - b[1].seq,
  );
  for (const [marker, { writer }] of ordered) {
    const at = found.get(marker) ?? [];
    if (at.length !== 1) lost(`acknowledged fragment ${marker} appears ${at.length} times`);
    const position = at[0] ?? -1;
    if (position < (lastPosition.get(writer) ?? -1))
      lost(`fragment ${marker} is before an earlier one of its writer`);
    lastPosition.set(writer, position);
  }
  for (const [marker, at] of found) {
    if (task.markers.has(marker)) continue;
    if (!task.unknown.has(marker))
      lost(`the plan holds ${marker}, which the soak never had acknowledged nor pending`);
    else if (at.length > 1) lost(`fragment ${marker} of unknown outcome appears ${at.length} times`);
  }
  if (task.unknown.size === 0 && version !== task.version)
    lost(`plan version ${version}, highest acknowledged ${task.version}`);
}

function describeLedgerLoss(task: SoakTask, content: string): string {
  let from = 0;
  for (const [i, fragment] of task.fragments.entries()) {
    const at = content.indexOf(fragment.trimEnd(), from);
    if (at === -1)
      return `acknowledged fragment #${i} of ${task.fragments.length} is missing (or out of order)`;
    from = at + fragment.trimEnd().length;
  }
  return `every acknowledged fragment is present in order, but the plan (${Buffer.byteLength(content)} bytes) differs from their composition`;
}

async function verifyHistory(ctx: LoadContext, task: SoakTask, head: string, latest: number): Promise<void> {
  const client: Clients = ctx.calls.client();
  const numbers: number[] = [];
  let newestId = "";
  let pageToken = "";
  do {
    const page = await ctx.calls.run("ListPlanRevisions (verify)", () =>
      client.plans.listPlanRevisions({ taskId: task.id, pageSize: 100, pageToken }),
    );
    for (const revision of page.revisions) {
      if (numbers.length === 0) newestId = revision.id;
      numbers.push(Number(revision.revisionNumber));
    }
    pageToken = page.nextPageToken;
  } while (pageToken !== "");
  const gapFree = numbers.every((n, i) => n === latest - i) && numbers.length === latest;
  if (!gapFree || latest !== task.latestRevision) {
    ctx.findings.add(
      "lost-write",
      `${task.id}: revisions ${numbers.length} (newest ${numbers[0]}), plan says ${latest}, acknowledged ${task.latestRevision}`,
    );
    return;
  }
  const { revision } = await ctx.calls.run("GetPlanRevision (verify)", (c) =>
    c.plans.getPlanRevision({ taskId: task.id, revisionId: newestId }),
  );
  if (revision?.content !== head)
    ctx.findings.add("lost-write", `${task.id}: the newest revision does not hold the plan's content`);
}
