import { codePoints } from "./random";
import { type SoakTask, utf8 } from "./tasks";
import type { LoadContext } from "./types";

const NOT_FOUND = 5;

/**
 * A whole-plan read of a held sole-writer task: it must return the content and version of the last
 * acknowledged write (or PLAN_NOT_FOUND after a plan delete), whichever replica answers.
 */
export async function verifiedRead(ctx: LoadContext, task: SoakTask): Promise<void> {
  const deleted = task.content === null;
  let response;
  try {
    response = await ctx.calls.run(
      "GetPlan",
      (c) => c.plans.getPlan({ taskId: task.id }),
      (failure) => deleted && failure.code === NOT_FOUND && failure.reason === "PLAN_NOT_FOUND",
    );
  } catch (error) {
    if (deleted) return;
    throw error;
  }
  const plan = response.plan;
  if (deleted || plan?.content !== task.content || Number(plan?.version) !== task.version) {
    ctx.findings.add(
      "read-mismatch",
      `${task.id}: GetPlan returned version ${plan?.version} (${plan?.contentBytes} bytes), the last acknowledged write is version ${task.version} (${deleted ? "plan deleted" : `${utf8(task.content ?? "")} bytes`})`,
    );
  }
}

/** A range read (offset and limit in code points) of a held sole-writer task, checked against the model. */
export async function partialRead(ctx: LoadContext, task: SoakTask): Promise<void> {
  if (task.content === null) return verifiedRead(ctx, task);
  const points = codePoints(task.content);
  const offset = ctx.random.int(0, Math.max(0, points.length - 1));
  const limit = ctx.random.int(1, 4096);
  const response = await ctx.calls.run("GetPlan (partial)", (c) =>
    c.plans.getPlan({ taskId: task.id, offset, limit }),
  );
  const expected = points.slice(offset, offset + limit).join("");
  const more = offset + limit < points.length;
  const ok =
    response.plan?.content === expected &&
    Number(response.totalChars) === points.length &&
    response.hasMore === more &&
    (!more || Number(response.nextOffset) === offset + limit);
  if (!ok) {
    ctx.findings.add(
      "read-mismatch",
      `${task.id}: GetPlan offset ${offset} limit ${limit} of ${points.length} code points returned ${codePoints(response.plan?.content ?? "").length} code points, total ${response.totalChars}, has_more ${response.hasMore}`,
    );
  }
}

/** A page of revision metadata, and one revision's content, of any task (it may be written meanwhile). */
export async function revisionReads(ctx: LoadContext, task: SoakTask): Promise<void> {
  const gone = (failure: { code: number }) => failure.code === NOT_FOUND && task.retired;
  const page = await ctx.calls.run(
    "ListPlanRevisions",
    (c) => c.plans.listPlanRevisions({ taskId: task.id, pageSize: ctx.random.int(1, 50) }),
    gone,
  );
  const numbers = page.revisions.map((r) => Number(r.revisionNumber));
  if (numbers.some((n, i) => i > 0 && n !== (numbers[i - 1] ?? 0) - 1)) {
    ctx.findings.add(
      "read-mismatch",
      `${task.id}: ListPlanRevisions numbers not consecutive: ${numbers.join(",")}`,
    );
  }
  const pick = page.revisions.length > 0 ? ctx.random.pick(page.revisions) : null;
  if (!pick) return;
  const { revision } = await ctx.calls.run(
    "GetPlanRevision",
    (c) => c.plans.getPlanRevision({ taskId: task.id, revisionId: pick.id }),
    gone,
  );
  if (revision && Number(revision.contentBytes) !== utf8(revision.content)) {
    ctx.findings.add(
      "read-mismatch",
      `${task.id}: revision ${revision.revisionNumber} says ${revision.contentBytes} bytes, holds ${utf8(revision.content)}`,
    );
  }
}
