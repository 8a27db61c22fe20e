import { type Command } from "commander";
import { isWatchHistoryExpired, type PlanChange } from "@taskplans/client";
import { checklistWords } from "../checklist-text";
import { act, type Io, wholeNumber, withCommonOptions } from "../runtime";
import { authorJson, changeKindName, planJson, timeJson, writtenRevisionJson } from "../shapes";

/**
 * Like `tail -f`, a watch outlasts a restart: it reconnects for up to two minutes of outage (the
 * client's default gives up after five attempts, about 3 s), the count starting again after every
 * change it prints.
 */
const WATCH_RETRY = { maxAttempts: 40, maxElapsedMs: 120_000 } as const;

const changeJson = (change: PlanChange, withContent: boolean) => ({
  kind: changeKindName(change.kind),
  version: change.plan?.version ?? 0,
  author: authorJson(change.author),
  committed_at: timeJson(change.committedAt),
  revision: writtenRevisionJson(change.revision),
  plan: planJson(change.plan),
  ...(withContent ? { content: change.plan?.content ?? "" } : {}),
});

/**
 * `watch TASK [--after V] [--content]`: one line per change, like `tail -f`, until Ctrl-C. The
 * client's watch reopens the stream after the last version printed when a replica drains or a
 * connection drops; WATCH_HISTORY_EXPIRED ends it with what to do (read again, watch after).
 */
export function addWatchCommand(program: Command, io: Io): void {
  withCommonOptions(program.command("watch").description("print one line per change of a task's plan"))
    .argument("<task>")
    .option("--after <v>", "only changes after this version (default: a snapshot first)")
    .option("--content", "also print the plan's content after each change")
    .action(
      act(io, async ({ out, client }, [taskId = ""], options) => {
        const afterVersion = options.after === undefined ? undefined : wholeNumber(options.after, "--after");
        const withContent = options.content === true;
        const watch = client({ retry: WATCH_RETRY }).plans.watch(taskId, {
          afterVersion,
          includeContent: withContent,
        });
        const stop = () => watch.cancel();
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
        try {
          for await (const change of watch) {
            const shown = changeJson(change, withContent);
            if (out.json) out.document(shown);
            else {
              const revision = shown.revision ? ` revision ${shown.revision.number}` : "";
              const by = shown.author.name ? ` by ${shown.author.kind}:${shown.author.name}` : "";
              // The checklist progress of the plan after the change, when it has a checklist.
              const progress = shown.plan.checklist?.total
                ? [`checklist ${checklistWords(shown.plan.checklist)}`]
                : [];
              out.line(
                `${shown.committed_at ?? "-"} version ${shown.version} ${shown.kind}${by}${revision}`,
                `${shown.plan.content_bytes} bytes`,
                ...progress,
              );
              if (withContent) out.content(`${shown.content ?? ""}\n`);
            }
          }
        } catch (error) {
          // Exit 1 with the service's reason and next action, after one sentence saying what it means.
          if (isWatchHistoryExpired(error))
            out.note(
              `watch ended: the changes after the last version shown are no longer kept; read the plan again (planctl get ${taskId} --version) and watch --after that version`,
            );
          throw error;
        } finally {
          process.removeListener("SIGINT", stop);
          process.removeListener("SIGTERM", stop);
        }
      }),
    );
}
