import { type Command } from "commander";
import { RestoreStatus, type PlanRevision } from "@taskplans/client";
import { acknowledge } from "../acknowledge";
import { checklistCell } from "../checklist-text";
import { printDiff } from "../diff-text";
import { allRevisions, revisionId, revisionPage } from "../revisions";
import { act, type Io, wholeNumber, withCommonOptions } from "../runtime";
import {
  authorJson,
  changeKindName,
  diffJson,
  planJson,
  revisionJson,
  timeJson,
  writtenRevisionJson,
} from "../shapes";

// checklist: the revision's progress as the service counted it, "3/5" ("none": no checklist; "-":
// a revision written before the service counted it).
const HISTORY_HEAD = ["#", "author", "kind", "time", "coalesced", "revert-of", "size", "checklist"];

function historyRows(revisions: readonly PlanRevision[]): string[][] {
  const numbers = new Map(revisions.map((revision) => [revision.id, revision.revisionNumber]));
  return revisions.map((revision) => {
    const shown = revisionJson(revision);
    const revertOf = shown.revert_of_revision_id;
    return [
      String(shown.number),
      shown.author.name,
      shown.author.kind,
      shown.updated_at ?? "",
      shown.coalesced ? "yes" : "",
      revertOf === null ? "" : String(numbers.get(revertOf) ?? revertOf.slice(0, 8)),
      `${shown.content_bytes} B`,
      checklistCell(shown.checklist),
    ];
  });
}

/** `history`, `show`, `diff`, `changes`, `restore`, `revert`. */
export function addHistoryCommands(program: Command, io: Io): void {
  const command = (name: string, description: string) =>
    withCommonOptions(program.command(name).description(description)).argument("<task>");

  command("history", "list a task's revisions, newest first")
    .option("--all", "every revision, page after page (default: the newest page)")
    .option("--limit <n>", "revisions per page", "20")
    .action(
      act(io, async ({ out, client }, [taskId = ""], options) => {
        let revisions: PlanRevision[] = [];
        let more = false;
        if (options.all)
          for await (const revision of allRevisions(client(), taskId)) revisions.push(revision);
        else {
          const page = await revisionPage(client(), taskId, "", wholeNumber(options.limit, "--limit"));
          revisions = page.revisions;
          more = page.next !== "";
        }
        if (out.json) return revisions.forEach((revision) => out.document(revisionJson(revision)));
        out.table(HISTORY_HEAD, historyRows(revisions));
        if (more) out.note("older revisions: planctl history --all");
      }),
    );

  command("show", "print one revision's content (number or id)")
    .argument("<revision>")
    .action(
      act(io, async ({ out, client }, [taskId = "", revision = ""]) => {
        const id = await revisionId(client(), taskId, revision);
        const found = (await client().plans.getPlanRevision({ taskId, revisionId: id })).revision;
        if (out.json) return out.document(revisionJson(found, true));
        out.content(found?.content ?? "");
      }),
    );

  command("diff", "unified diff between two revisions (numbers or ids)")
    .argument("<from>")
    .argument("<to>")
    .action(
      act(io, async ({ out, client }, [taskId = "", from = "", to = ""]) => {
        const answer = await client().plans.diffPlanRevisions({
          taskId,
          fromRevisionId: await revisionId(client(), taskId, from),
          toRevisionId: await revisionId(client(), taskId, to),
        });
        if (out.json)
          return out.document({
            from: revisionJson(answer.fromRevision),
            to: revisionJson(answer.toRevision),
            diff: diffJson(answer.diff),
          });
        printDiff(out, answer.diff?.unifiedDiff ?? "");
      }),
    );

  command("changes", "the changes since a version you read, then a unified diff")
    .requiredOption("--since <v>", "the version you read")
    .action(
      act(io, async ({ out, client }, [taskId = ""], options) => {
        const sinceVersion = wholeNumber(options.since, "--since");
        const answer = await client().plans.getPlanChanges({ taskId, sinceVersion });
        const changes = answer.changes.map((change) => ({
          version: change.version,
          kind: changeKindName(change.kind),
          author: authorJson(change.author),
          committed_at: timeJson(change.committedAt),
          revision: writtenRevisionJson(change.revision),
        }));
        if (out.json)
          return out.document({
            plan: planJson(answer.plan),
            since_version: answer.sinceVersion,
            changes,
            changes_truncated: answer.changesTruncated,
            diff: diffJson(answer.diff),
          });
        const current = answer.plan?.version ?? 0;
        out.line(`${taskId} version ${current}: ${changes.length} change(s) since version ${sinceVersion}`);
        for (const change of changes)
          out.line(
            `version ${change.version}`,
            change.kind,
            `by ${change.author.kind}:${change.author.name}`,
            change.committed_at ?? "",
          );
        if (answer.changesTruncated) out.line("(older changes left out; the diff covers them all)");
        printDiff(out, answer.diff?.unifiedDiff ?? "");
      }),
    );

  command("restore", "make a past revision current, if nothing changed since")
    .argument("<revision>")
    .requiredOption("--expected-version <v>", "the plan's current version")
    .requiredOption("--expected-revision-version <w>", "the revision's revision_version (history -o json)")
    .action(
      act(io, async ({ out, client }, [taskId = "", revision = ""], options) => {
        const answer = await client().plans.restorePlanRevision({
          taskId,
          revisionId: await revisionId(client(), taskId, revision),
          expectedVersion: wholeNumber(options.expectedVersion, "--expected-version"),
          expectedRevisionVersion: String(options.expectedRevisionVersion),
        });
        const current = answer.status === RestoreStatus.RESTORE_STATUS_ALREADY_CURRENT;
        if (!out.json && current)
          return out.line(`${taskId} already equals revision ${revision}: nothing written`);
        acknowledge(out, { plan: answer.plan, revision: answer.revision });
      }),
    );

  command("revert", "make a past revision current again, unconditionally")
    .argument("<revision>")
    .action(
      act(io, async ({ out, client }, [taskId = "", revision = ""]) => {
        const id = await revisionId(client(), taskId, revision);
        acknowledge(out, await client().plans.revertPlan({ taskId, revisionId: id }));
      }),
    );
}
