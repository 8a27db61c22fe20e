import type { handleClientStreamingCall } from "@grpc/grpc-js";
import type { ImportTaskRequest, ImportTaskResponse, TaskServiceServer } from "@taskplans/contract";
import { planErrors } from "../plans/errors";
import type { TaskService } from "../plans/task-service";
import type { TaskTransfer } from "../plans/transfer/task-transfer";
import { CallScope } from "./call-scope";
import { encodeTask } from "./encode/encode";
import {
  decodeImportedHead,
  decodeImportedRevision,
  decodeImportedTask,
  encodeExportPage,
  encodeImportOutcome,
} from "./encode/encode-transfer";
import type { RawServer, ReceivedRequest } from "./wire/received-request";
import { RequestError } from "./wire/request-error";
import { answerThrough, unary, type UnaryDeps } from "./unary";

/** TaskService handlers: decode -> service -> encode. */
export function taskHandlers(
  service: TaskService,
  transfer: TaskTransfer,
  deps: UnaryDeps,
): RawServer<TaskServiceServer> {
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
    listTasks: unary("ListTasks", deps, async (request, { caller }) => {
      const page = await transfer.listTasks(caller, request);
      return { tasks: page.tasks.map(encodeTask), nextPageToken: page.nextPageToken };
    }),
    exportTask: unary("ExportTask", deps, async (request, { caller }) =>
      encodeExportPage(await transfer.exportPage(caller, request)),
    ),
    importTask: importTaskHandler(transfer, deps),
  };
}

/**
 * ImportTask, a client stream: the first message (`start`) opens the call's scope (authentication)
 * and is held to the operator rule before anything else is read; the revisions that follow are
 * bounded by the declared count and the history budget as they arrive; the import runs once the
 * client half-closes.
 */
function importTaskHandler(
  transfer: TaskTransfer,
  deps: UnaryDeps,
): handleClientStreamingCall<ReceivedRequest<ImportTaskRequest>, ImportTaskResponse> {
  return (call, callback) => {
    const scope = new CallScope(deps, "ImportTask", call, "unary");
    scope
      .run(async () => {
        const messages = call[Symbol.asyncIterator]() as AsyncIterator<ReceivedRequest<ImportTaskRequest>>;
        const first = await messages.next();
        if (first.done) throw new RequestError("MALFORMED_REQUEST", null, "the import stream is empty");
        const { request, caller } = await scope.open(first.value);
        transfer.requireOperator(caller);
        const { start } = request;
        if (start === undefined) throw planErrors.invalidField("start", "must be the first message");
        // The first message is held to its rules before any revision is read, and each revision
        // as it arrives: a stream is refused at the first field past a rule or a bound.
        const stream = transfer.openImport(caller, {
          task: decodeImportedTask(start.task),
          head: decodeImportedHead(start.head),
          declaredCount: start.revisionCount,
        });
        for (let next = await messages.next(); !next.done; next = await messages.next()) {
          const part = next.value.decode();
          if (part.revisions === undefined)
            throw planErrors.invalidField("revisions", "must be set on every message after the first");
          for (const exported of part.revisions.revisions) stream.add(decodeImportedRevision(exported));
        }
        const revisions = stream.revisionCount;
        const contentBytes = stream.contentBytes;
        const outcome = await transfer.importTask(caller, {
          stream,
          overwrite: start.overwrite,
          dryRun: start.dryRun,
          deadline: scope.deadline,
        });
        return {
          outcome: encodeImportOutcome(outcome),
          revisions,
          contentBytes,
          dryRun: start.dryRun,
        };
      })
      .then(...answerThrough(scope, callback));
  };
}
