import type { PlanRevision, TaskPlansClient } from "@taskplans/client";

const PAGE_SIZE = 100;

/** One page of a task's revisions, newest first, and the token of the next (or ""). */
export async function revisionPage(
  client: TaskPlansClient,
  taskId: string,
  pageToken = "",
  pageSize = PAGE_SIZE,
): Promise<{ revisions: PlanRevision[]; next: string }> {
  const page = await client.plans.listPlanRevisions({ taskId, pageSize, pageToken });
  return { revisions: page.revisions, next: page.nextPageToken };
}

/** Every revision of a task, newest first, page after page. */
export async function* allRevisions(client: TaskPlansClient, taskId: string): AsyncGenerator<PlanRevision> {
  let token = "";
  do {
    const page = await revisionPage(client, taskId, token);
    yield* page.revisions;
    token = page.next;
  } while (token !== "");
}

/**
 * A REVISION argument as the revision id the RPCs take: a revision number (what `history` shows)
 * is looked up in the task's history; anything else is taken as an id. A number with no revision
 * is passed on as given, so the service answers REVISION_NOT_FOUND.
 */
export async function revisionId(client: TaskPlansClient, taskId: string, revision: string): Promise<string> {
  if (!/^\d+$/.test(revision)) return revision;
  const number = Number(revision);
  for await (const found of allRevisions(client, taskId)) {
    if (found.revisionNumber === number) return found.id;
    if (found.revisionNumber < number) break; // newest first: it is not there
  }
  return revision;
}
