import { type Command } from "commander";
import { act, type Io, withCommonOptions } from "../runtime";
import { taskJson } from "../shapes";

/** `task create|get|delete`. */
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
      out.table(
        ["task", "workspace", "title", "created"],
        [[shown.task_id, shown.workspace_id, shown.title, shown.created_at ?? ""]],
      );
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
