import { type Command } from "commander";
import { type TaskPlansClient, WriteMode, type WritePlanResponse } from "@taskplans/client";
import { acknowledge } from "../acknowledge";
import { UsageError } from "../failures";
import { readInput } from "../input";
import { act, type Io, wholeNumber, withCommonOptions } from "../runtime";
import { planMetaLines } from "../plan-meta";
import { planJson } from "../shapes";

type WholeDocumentCall = (
  client: TaskPlansClient,
  request: { taskId: string; content: string; title?: string; author?: { name: string } },
) => Promise<WritePlanResponse>;

const author = (options: Record<string, unknown>) =>
  options.author === undefined ? {} : { author: { name: String(options.author) } };

// "FROM:TO" in code points -> GetPlan's offset and limit; either side may be left out.
function rangeOf(range: string): { offset?: number; limit?: number } {
  const match = /^(\d*):(\d*)$/.exec(range);
  if (!match) throw new UsageError(`--range must be FROM:TO (code points), not "${range}"`);
  const from = match[1] ? wholeNumber(match[1], "FROM") : 0;
  const to = match[2] ? wholeNumber(match[2], "TO") : undefined;
  if (to !== undefined && to <= from) throw new UsageError("--range: TO must be past FROM");
  return { offset: from, ...(to === undefined ? {} : { limit: to - from }) };
}

/** `get`, `create-plan`, `append`, `replace`, `edit`, `save`, `delete-plan`, `mark-started`. */
export function addPlanCommands(program: Command, io: Io): void {
  const command = (name: string, description: string) =>
    withCommonOptions(program.command(name).description(description));

  command("get", "print a task's plan (content only, byte-exact when piped)")
    .argument("<task>")
    .option("--range <from:to>", "only code points FROM up to TO")
    .option("--version", "print the plan's version instead of its content")
    .option("--meta", "print the plan's metadata (version, size, checklist progress) instead of its content")
    .action(
      act(io, async ({ out, client }, [taskId = ""], options) => {
        if (options.meta) {
          // One code point of content: the metadata (sizes of the whole plan, its checklist progress)
          // without reading the plan into the answer.
          const { plan } = await client().plans.getPlan({ taskId, limit: 1 });
          const shown = planJson(plan);
          if (out.json) return out.document(shown);
          return planMetaLines(shown).forEach((line) => out.line(line));
        }
        const range = options.range === undefined ? {} : rangeOf(String(options.range));
        const { plan, hasMore, nextOffset } = await client().plans.getPlan({ taskId, ...range });
        if (out.json)
          return out.document({
            ...planJson(plan),
            content: plan?.content ?? "",
            has_more: hasMore,
            next_offset: nextOffset ?? null,
          });
        if (options.version) return out.line(String(plan?.version ?? 0));
        out.content(plan?.content ?? "");
      }),
    );

  const write = (name: string, description: string) =>
    command(name, description).option("--author <name>", "the author's name recorded on the revision");

  // The two whole-document writes without a version: CreatePlan (refused when a plan exists) and
  // SavePlan (the editor's unconditional save).
  const wholeDocument = (name: string, description: string, send: WholeDocumentCall) =>
    write(name, description)
      .argument("<task>")
      .argument("[file]", "the plan, or - for stdin (default)")
      .option("--title <title>")
      .action(
        act(io, async ({ out, client }, [taskId = "", file], options) => {
          const content = await readInput(io, file);
          const title = options.title === undefined ? {} : { title: String(options.title) };
          acknowledge(out, await send(client(), { taskId, content, ...title, ...author(options) }));
        }),
      );
  wholeDocument("create-plan", "create a task's plan from FILE or stdin", (client, request) =>
    client.plans.createPlan(request),
  );
  wholeDocument(
    "save",
    "create or replace a task's plan, unconditionally (as an editor)",
    (client, request) => client.plans.savePlan(request),
  );

  write("append", "append FILE or stdin to a task's plan (one blank line between)")
    .argument("<task>")
    .argument("[file]", "the fragment, or - for stdin (default)")
    .action(
      act(io, async ({ out, client }, [taskId = "", file], options) => {
        const content = await readInput(io, file);
        const mode = WriteMode.WRITE_MODE_APPEND;
        acknowledge(out, await client().plans.updatePlan({ taskId, content, mode, ...author(options) }));
      }),
    );

  write("replace", "replace a task's whole plan, if still at the expected version")
    .argument("<task>")
    .argument("<file>", "the whole new plan, or - for stdin")
    .requiredOption("--expected-version <v>", "the version you read (planctl get TASK --version)")
    .option("--acknowledge-reduction", "allow keeping less than half of a long plan")
    .option("--merge", "merge with changes made since the expected version")
    .option("--title <title>")
    .action(
      act(io, async ({ out, client }, [taskId = "", file], options) => {
        const content = await readInput(io, file);
        const response = await client().plans.updatePlan({
          taskId,
          content,
          mode: WriteMode.WRITE_MODE_REPLACE,
          expectedVersion: wholeNumber(options.expectedVersion, "--expected-version"),
          acknowledgeReduction: options.acknowledgeReduction === true,
          ...(options.merge ? { merge: true } : {}),
          ...(options.title === undefined ? {} : { title: String(options.title) }),
          ...author(options),
        });
        acknowledge(out, response);
      }),
    );

  write("edit", "replace one exact occurrence of a text in a task's plan")
    .argument("<task>")
    .option("--old <text>", "the text to replace (exactly once in the plan)")
    .option("--old-file <file>", "the text to replace, from a file")
    .option("--new <text>", "the replacement (empty deletes)")
    .option("--new-file <file>", "the replacement, from a file")
    .requiredOption("--expected-version <v>", "the version you read")
    .option("--acknowledge-reduction", "allow keeping less than half of a long plan")
    .option("--merge", "apply to the text you read, merged with changes made since")
    .action(
      act(io, async ({ out, client }, [taskId = ""], options) => {
        const text = async (inline: unknown, file: unknown, name: string) => {
          if ((inline === undefined) === (file === undefined))
            throw new UsageError(`give exactly one of --${name} and --${name}-file`);
          return inline === undefined ? readInput(io, String(file)) : String(inline);
        };
        const response = await client().plans.editPlan({
          taskId,
          oldText: await text(options.old, options.oldFile, "old"),
          newText: await text(options.new, options.newFile, "new"),
          expectedVersion: wholeNumber(options.expectedVersion, "--expected-version"),
          acknowledgeReduction: options.acknowledgeReduction === true,
          ...(options.merge ? { merge: true } : {}),
          ...author(options),
        });
        acknowledge(out, response);
      }),
    );

  command("delete-plan", "delete a task's plan (its revisions are kept)")
    .argument("<task>")
    .option("--expected-version <v>", "delete only if the plan is still at this version")
    .action(
      act(io, async ({ out, client }, [taskId = ""], options) => {
        const expected =
          options.expectedVersion === undefined
            ? {}
            : { expectedVersion: wholeNumber(options.expectedVersion, "--expected-version") };
        await client().plans.deletePlan({ taskId, ...expected });
        if (out.json) out.document({ task_id: taskId, deleted: true });
        else out.line(`${taskId} plan deleted`);
      }),
    );

  command("mark-started", "record that implementation of a task's plan started")
    .argument("<task>")
    .requiredOption("--session <id>", "the implementing session's id")
    .requiredOption("--actor <name>", "who started it")
    .action(
      act(io, async ({ out, client }, [taskId = ""], options) => {
        const { plan } = await client().plans.markImplementationStarted({
          taskId,
          sessionId: String(options.session),
          actor: String(options.actor),
        });
        if (out.json) return out.document(planJson(plan));
        out.line(`${taskId} implementation started at version ${plan?.version ?? 0}`);
      }),
    );
}
