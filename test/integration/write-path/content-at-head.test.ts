import { AuthorKind, WriteMode } from "@taskplans/contract";
import { execSql } from "../../harness/databases/sql";
import { DATABASES, startTestApp, type TestApp } from "../../harness/servers/test-app";

const APPEND = WriteMode.WRITE_MODE_APPEND;
const AT_HEAD = { PLAN_REVISION_CONTENT_AT_HEAD: "true" };

/** Every revision as the API returns it (number, author, content, sizes), oldest first, and HEAD. */
async function history(app: TestApp, taskId: string) {
  const listed = (await app.plans.listPlanRevisions({ taskId, pageSize: 100 })).revisions.reverse();
  const revisions = [];
  for (const meta of listed) {
    const revision = (await app.plans.getPlanRevision({ taskId, revisionId: meta.id })).revision;
    revisions.push([
      revision?.revisionNumber,
      revision?.authorKind,
      revision?.content,
      revision?.contentBytes,
    ]);
  }
  const plan = (await app.plans.getPlan({ taskId }).catch(() => ({ plan: undefined }))).plan;
  return { revisions, head: plan ? [plan.version, plan.content, plan.contentBytes] : null };
}

/** The revision numbers marked as holding HEAD's content. */
async function marked(app: TestApp, taskId: string): Promise<number[]> {
  const rows = (await execSql(
    app.databaseUrl,
    "SELECT revision_number FROM task_plan_revisions WHERE task_id = ? AND content_at_head = 1",
    [taskId],
  )) as { revision_number: number }[];
  return rows.map((row) => Number(row.revision_number));
}

/** Writes of every kind: coalescing appends and replaces, new revisions by author, reduction, revert, restore, delete. */
async function everyWrite(app: TestApp, taskId: string, step: (done: string) => Promise<void>) {
  const user = { kind: AuthorKind.AUTHOR_KIND_USER, name: "Person" };
  await app.plans.createPlan({ taskId, content: "# Plan\n\nfirst" });
  await app.plans.updatePlan({ taskId, content: "- one", mode: APPEND });
  await app.plans.updatePlan({ taskId, content: "- two 😀\n", mode: APPEND });
  await step("appends coalesced into revision 1");
  await app.plans.savePlan({ taskId, content: "# Plan\n\nby a person\n", author: user }); // revision 2
  await app.plans.updatePlan({ taskId, content: "- three", mode: APPEND }); // revision 3 (an agent)
  await step("new revisions by author");
  const v = (await app.plans.getPlan({ taskId })).plan?.version;
  await app.plans.updatePlan({ taskId, content: "# P", expectedVersion: v, acknowledgeReduction: true }); // 4
  await step("an acknowledged reduction");
  const revisions = (await app.plans.listPlanRevisions({ taskId, pageSize: 100 })).revisions;
  const first = revisions.at(-1);
  await app.plans.revertPlan({ taskId, revisionId: first?.id, author: user }); // 5
  const second = (await app.plans.getPlanRevision({ taskId, revisionId: revisions.at(-2)?.id })).revision;
  await app.plans.restorePlanRevision({
    taskId,
    revisionId: second?.id,
    expectedVersion: (await app.plans.getPlan({ taskId })).plan?.version,
    expectedRevisionVersion: second?.revisionVersion,
  }); // 6
  await app.plans.updatePlan({ taskId, content: "- after the restore", mode: APPEND });
  await step("revert, restore and an append");
  await app.plans.deletePlan({ taskId });
  await step("delete");
  await app.plans.createPlan({ taskId, content: "again" });
  await app.plans.updatePlan({ taskId, content: "- and more", mode: APPEND });
  await step("created again");
}

describe.each(DATABASES)(
  "revision content held at HEAD (PLAN_REVISION_CONTENT_AT_HEAD), on $label",
  ({ dialect }) => {
    let on: TestApp;
    let off: TestApp;
    beforeAll(async () => {
      [on, off] = await Promise.all([startTestApp(dialect, { env: AT_HEAD }), startTestApp(dialect)]);
    });
    afterAll(() => Promise.all([on.stop(), off.stop()]));

    it("reads every revision and HEAD exactly as with copies, after every kind of write; only the newest revision is marked", async () => {
      const [a, b] = [await on.newTask(), await off.newTask()];
      const steps: string[] = [];
      const expected: Awaited<ReturnType<typeof history>>[] = [];
      await everyWrite(off, b, async (done) => {
        steps.push(done);
        expected.push(await history(off, b));
        expect(await marked(off, b)).toEqual([]);
      });
      let i = 0;
      await everyWrite(on, a, async (done) => {
        expect([done, await history(on, a)]).toEqual([steps[i], expected[i]]);
        const latest = (await on.plans.listPlanRevisions({ taskId: a, pageSize: 1 })).revisions[0]
          ?.revisionNumber;
        expect(await marked(on, a)).toEqual(done === "delete" ? [] : [latest]);
        i++;
      });
      expect(i).toBe(steps.length);
    });

    it("a replica with the setting off goes on from a history written with it on, and every revision keeps its content", async () => {
      const taskId = await on.newTask();
      await on.plans.createPlan({ taskId, content: "written with the setting on" });
      await on.plans.updatePlan({ taskId, content: "- appended", mode: APPEND });
      expect(await marked(on, taskId)).toEqual([1]);
      const before = await history(on, taskId);
      const later = await startTestApp(dialect, { env: { PLAN_DATABASE_URL: on.databaseUrl } });
      try {
        // A new revision through the replica with the setting off copies revision 1 out of HEAD first.
        await later.plans.savePlan({
          taskId,
          content: "by a person",
          author: { kind: AuthorKind.AUTHOR_KIND_USER, name: "P" },
        });
        expect(await marked(later, taskId)).toEqual([]);
        const after = await history(later, taskId);
        expect(after.revisions[0]).toEqual(before.revisions[0]);
        expect(after.revisions[1]?.[2]).toBe("by a person");
      } finally {
        await later.stop();
      }
    });
  },
);
