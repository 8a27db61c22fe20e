import type { PlanGateway } from "../plan-gateway";
import { CONFIGURE_TOKEN, fromGrpcError, rejected, type TaskRun } from "../tool-results";

/**
 * How every tool runs against its task: the task_id given, or the server's default; a token
 * problem or a missing task refused before any call; a failed call turned into the tool's error.
 */
export function taskRunner(plans: PlanGateway, defaultTaskId: string | undefined): TaskRun {
  const taskIdOf = (given: string | undefined) => given || defaultTaskId;
  return async (kind, given, run, expectedVersion) => {
    const taskId = taskIdOf(given);
    const tokenProblem = plans.tokenProblem();
    if (tokenProblem) return rejected(tokenProblem, "TOKEN_INVALID", CONFIGURE_TOKEN, kind);
    if (!taskId)
      return rejected(
        "no task_id was given and this server has no default task",
        "INVALID_FIELD",
        "Pass task_id.",
        kind,
      );
    try {
      return await run(taskId);
    } catch (error) {
      return fromGrpcError(error, kind, expectedVersion);
    }
  };
}
