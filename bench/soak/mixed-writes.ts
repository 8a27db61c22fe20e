import { AuthorKind, RestoreStatus, WriteMode, type WritePlanResponse } from "@taskplans/client";
import { codePoints, markdown } from "./random";
import { composeAppend, type SoakTask, utf8 } from "./tasks";
import type { LoadContext } from "./types";

const AGENT = { kind: AuthorKind.AUTHOR_KIND_AGENT, name: "planner" };
const USER = { kind: AuthorKind.AUTHOR_KIND_USER, name: "editor" };
/** Past this size a mixed plan is replaced by a small one (it never nears the 256 KiB limit). */
const LARGE = 24 * 1024;

const WRITES = {
  append: 25,
  replace: 20,
  save: 15,
  edit: 15,
  restore: 8,
  revert: 6,
  conditionalCreate: 4,
  deletePlan: 2,
  mark: 4,
};

/** The reduction guard's rule (seed 003), so the soak acknowledges exactly the reductions it makes. */
function reduces(prior: string, next: string): boolean {
  const priorChars = codePoints(prior).length;
  return priorChars >= 2_000 && codePoints(next).length * 2 < priorChars;
}

/** Occurrences of `needle` in `text`, overlapping ones included (what EditPlan counts). */
function occurrences(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) count++;
  return count;
}

/**
 * One write of any kind to a mixed task (the caller holds it, so the soak's model is exact):
 * append, replace, editor save, exact edit, restore, revert, conditional create, plan delete and
 * re-create, implementation mark. Returns false when it wrote nothing (a mark, ALREADY_CURRENT).
 */
export async function mixedWrite(ctx: LoadContext, task: SoakTask): Promise<boolean> {
  const { calls, random, findings } = ctx;
  const token = task.nextRequestId(); // unique per call: a line token, and the request_id if one is sent
  const current = task.content;
  const requestId = random.next() < 0.25 ? token : undefined;
  const withId = requestId ? { requestId } : {};
  const ack = (response: WritePlanResponse, content: string | null, versionStep = 1) => {
    task.acknowledge(response, { content, versionStep }, findings, ctx.now());
    if (requestId) task.requestIds++;
  };

  if (current === null) {
    // The plan was deleted: an agent create continues above the tombstone's version.
    const content = markdown(random, token, random.int(300, 4000));
    task.expect(content);
    ack(
      await calls.run("CreatePlan", (c) =>
        c.plans.createPlan({ taskId: task.id, content, author: AGENT, ...withId }),
      ),
      content,
    );
    return true;
  }
  const kind = utf8(current) > LARGE ? random.pick(["replace", "save"] as const) : random.weighted(WRITES);
  switch (kind) {
    case "append": {
      const fragment = markdown(random, token, random.int(100, 1500));
      const content = composeAppend(current, fragment);
      task.expect(content);
      const response = await calls.run("UpdatePlan append", (c) =>
        c.plans.updatePlan({
          taskId: task.id,
          content: fragment,
          mode: WriteMode.WRITE_MODE_APPEND,
          author: AGENT,
          ...withId,
        }),
      );
      ack(response, content);
      return true;
    }
    case "replace":
    case "conditionalCreate": {
      const content = markdown(random, token, random.int(300, 8000));
      const request = {
        taskId: task.id,
        content,
        expectedVersion: task.version,
        acknowledgeReduction: reduces(current, content),
        author: AGENT,
        ...withId,
      };
      task.expect(content);
      const response =
        kind === "replace"
          ? await calls.run("UpdatePlan replace", (c) =>
              c.plans.updatePlan({ ...request, mode: WriteMode.WRITE_MODE_REPLACE }),
            )
          : await calls.run("CreatePlan (conditional)", (c) => c.plans.createPlan(request));
      ack(response, content);
      return true;
    }
    case "save": {
      const content = markdown(random, token, random.int(300, 8000));
      task.expect(content);
      ack(
        await calls.run("SavePlan", (c) => c.plans.savePlan({ taskId: task.id, content, author: USER })),
        content,
      );
      return true;
    }
    case "edit": {
      const lines = current.split("\n").filter((line) => line.startsWith("- ["));
      const oldText = lines.length > 0 ? random.pick(lines) : "";
      if (oldText === "" || occurrences(current, oldText) !== 1) return false;
      const newText = `- [x] ${token} edited ${markdown(random, "e", 40).split("\n")[0]?.slice(3)}`;
      const at = current.indexOf(oldText);
      const content = current.slice(0, at) + newText + current.slice(at + oldText.length);
      task.expect(content);
      const response = await calls.run("EditPlan", (c) =>
        c.plans.editPlan({
          taskId: task.id,
          expectedVersion: task.version,
          oldText,
          newText,
          acknowledgeReduction: reduces(current, content),
          author: AGENT,
          ...withId,
        }),
      );
      ack(response, content);
      return true;
    }
    case "restore":
    case "revert": {
      const listed = await calls.run("ListPlanRevisions", (c) =>
        c.plans.listPlanRevisions({ taskId: task.id, pageSize: 20 }),
      );
      const older = listed.revisions.slice(1);
      if (older.length === 0) return false;
      const { revision } = await calls.run("GetPlanRevision", (c) =>
        c.plans.getPlanRevision({ taskId: task.id, revisionId: random.pick(older).id }),
      );
      if (!revision) return false;
      task.expect(revision.content);
      if (kind === "revert") {
        ack(
          await calls.run("RevertPlan", (c) =>
            c.plans.revertPlan({ taskId: task.id, revisionId: revision.id, author: USER }),
          ),
          revision.content,
        );
        return true;
      }
      const restored = await calls.run("RestorePlanRevision", (c) =>
        c.plans.restorePlanRevision({
          taskId: task.id,
          revisionId: revision.id,
          expectedVersion: task.version,
          expectedRevisionVersion: revision.revisionVersion,
          author: AGENT,
          ...withId,
        }),
      );
      if (restored.status === RestoreStatus.RESTORE_STATUS_ALREADY_CURRENT) {
        if (revision.content !== current || Number(restored.plan?.version) !== task.version) {
          findings.add(
            "version-sequence",
            `${task.id}: restore said ALREADY_CURRENT for other content or version`,
          );
        }
        return false;
      }
      ack({ plan: restored.plan, revision: restored.revision }, revision.content);
      return true;
    }
    case "deletePlan": {
      await calls.run("DeletePlan", (c) =>
        c.plans.deletePlan({ taskId: task.id, expectedVersion: task.version }),
      );
      task.acknowledgeDelete(ctx.now());
      return true;
    }
    case "mark": {
      const marked = await calls.run("MarkImplementationStarted", (c) =>
        c.plans.markImplementationStarted({ taskId: task.id, sessionId: token, actor: "soak" }),
      );
      if (Number(marked.plan?.version) !== task.version) {
        findings.add(
          "version-sequence",
          `${task.id}: MarkImplementationStarted changed the version to ${marked.plan?.version}`,
        );
      }
      task.acknowledgeMark(ctx.now());
      return false;
    }
  }
}
