/**
 * Seeds the tasks and plans the ghz profiles address: ghz-task-0 .. ghz-task-199 and ghz-hot.
 * Idempotent (existing tasks and plans are kept).
 *
 *   node dist-bench/bench/ghz/seed.js 127.0.0.1:50051
 */
import { credentials } from "@grpc/grpc-js";
import { PlanServiceClient } from "@taskplans/contract";
import { TaskServiceClient } from "@taskplans/contract";

export async function seed(target: string, tasks = 200): Promise<void> {
  const taskClient = new TaskServiceClient(target, credentials.createInsecure());
  const planClient = new PlanServiceClient(target, credentials.createInsecure());
  const ignoreExists = (code: number | undefined) => code === 6;
  const ids = [...Array.from({ length: tasks }, (_, i) => `ghz-task-${i}`), "ghz-hot"];
  for (const taskId of ids) {
    await new Promise<void>((resolve, reject) =>
      taskClient.createTask({ taskId, workspaceId: "ghz", title: taskId }, (error) =>
        !error || ignoreExists(error.code) ? resolve() : reject(error),
      ),
    );
    await new Promise<void>((resolve, reject) =>
      planClient.createPlan(
        { taskId, content: `# Plan for ${taskId}\n`, acknowledgeReduction: false, mode: 0 },
        (error) => (!error || ignoreExists(error.code) ? resolve() : reject(error)),
      ),
    );
  }
  taskClient.close();
  planClient.close();
}

if (require.main === module) {
  seed(process.argv[2] ?? "127.0.0.1:50051").then(
    () => process.stdout.write("seeded\n"),
    (error: unknown) => {
      process.stderr.write(`seeding failed: ${String(error)}\n`);
      process.exit(1);
    },
  );
}
