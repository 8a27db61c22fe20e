import { type Command } from "commander";
import { checklistCell } from "../checklist-text";
import { act, type Io, wholeNumber, withCommonOptions } from "../runtime";
import { taskJson } from "../shapes";

const TASK_HEAD = ["task", "workspace", "title", "created", "checklist"];

// A task as a table row; its checklist is the progress of its plan as the service counted it ("-":
// no plan, or one written before the service counted it).
const taskRow = (shown: ReturnType<typeof taskJson>) => [
  shown.task_id,
  shown.workspace_id,
  shown.title,
  shown.created_at ?? "",
  checklistCell(shown.checklist),
];

/** `task create|get|list|delete`. */
export function addTaskCommands(program: Command, io: Io): void {
  const task = program
    .command("task")
    .description("create, read or delete a task (the unit a plan belongs to)");
  const command = (name: string, description: string) =>
    withCommonOptions(task.command(name).description(description)).argument("<task>");

  command("create", "create a task in a workspace")
    .requiredOption("--workspace <id>", "the workspace the task belongs to")
    .option("--title <title>", "the task's title", "")
    .action(
      act(io, async ({ out, client }, [taskId = ""], options) => {
        const { task: created } = await client().tasks.createTask({
          taskId,
          workspaceId: String(options.workspace),
          title: String(options.title),
        });
        if (out.json) return out.document(taskJson(created));
        out.line(`${taskId} created in workspace ${created?.workspaceId ?? ""}`);
      }),
    );

  command("get", "show a task").action(
    act(io, async ({ out, client }, [taskId = ""]) => {
      const { task: found } = await client().tasks.getTask({ taskId });
      const shown = taskJson(found);
      if (out.json) return out.document(shown);
      out.table(TASK_HEAD, [taskRow(shown)]);
    }),
  );

  withCommonOptions(
    task.command("list").description("list the tasks you reach, with their plans' checklist progress"),
  )
    .option("--workspace <id>", "only the tasks of this workspace")
    .option("--limit <n>", "tasks per page, 1 to 1000", "100")
    .option("--all", "every task, page after page (default: the first page)")
    .action(
      act(io, async ({ out, client }, _args, options) => {
        const workspaceId = options.workspace === undefined ? "" : String(options.workspace);
        const pageSize = wholeNumber(options.limit, "--limit");
        const shown: ReturnType<typeof taskJson>[] = [];
        let pageToken = "";
        do {
          const page = await client().tasks.listTasks({ workspaceId, pageSize, pageToken });
          shown.push(...page.tasks.map(taskJson));
          pageToken = page.nextPageToken;
        } while (options.all && pageToken !== "");
        if (out.json) return shown.forEach((found) => out.document(found));
        out.table(TASK_HEAD, shown.map(taskRow));
        if (pageToken !== "") out.note("more tasks: planctl task list --all");
      }),
    );

  command("delete", "delete a task, its plan and its history").action(
    act(io, async ({ out, client }, [taskId = ""]) => {
      await client().tasks.deleteTask({ taskId });
      if (out.json) return out.document({ task_id: taskId, deleted: true });
      out.line(`${taskId} deleted`);
    }),
  );
}
