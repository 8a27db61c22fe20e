import type { TaskServiceServer } from "@taskplans/contract";
import type { TaskService } from "../plans/task-service";
import { encodeTask } from "./encode";
import type { RawServer } from "./received-request";
import { unary, type UnaryDeps } from "./unary";

/** TaskService handlers: decode -> service -> encode. */
export function taskHandlers(service: TaskService, deps: UnaryDeps): RawServer<TaskServiceServer> {
  return {
    createTask: unary("CreateTask", deps, async (request, { caller }) => ({
      task: encodeTask(
        await service.createTask(caller, {
          taskId: request.taskId,
          workspaceId: request.workspaceId,
          title: request.title,
        }),
      ),
    })),
    getTask: unary("GetTask", deps, async (request, { caller }) => ({
      task: encodeTask(await service.getTask(caller, request.taskId)),
    })),
    deleteTask: unary("DeleteTask", deps, async (request, { caller, write }) => {
      await service.deleteTask(caller, request.taskId, write.deadline);
      return {};
    }),
  };
}
