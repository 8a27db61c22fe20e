import type { handleClientStreamingCall } from "@grpc/grpc-js";
import type { ImportTaskRequest, ImportTaskResponse, TaskServiceServer } from "@taskplans/contract";
import { planErrors } from "../plans/errors";
import type { RevisionRecord } from "../plans/ports/records";
import type { TaskService } from "../plans/task-service";
import type { TaskTransfer } from "../plans/task-transfer";
import { CallScope } from "./call-scope";
import { encodeTask } from "./encode";
import {
  decodeImportedHead,
  decodeImportedRevision,
  decodeImportedTask,
  encodeExportPage,
  encodeImportOutcome,
} from "./encode-transfer";
import type { RawServer, ReceivedRequest } from "./received-request";
import { RequestError } from "./request-error";
import { unary, type UnaryDeps } from "./unary";

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
        const task = decodeImportedTask(start.task);
        const head = decodeImportedHead(start.head);
        const revisions: RevisionRecord[] = [];
        let bytes = 0;
        for (let next = await messages.next(); !next.done; next = await messages.next()) {
          const part = next.value.decode();
          if (part.revisions === undefined)
            throw planErrors.invalidField("revisions", "must be set on every message after the first");
          for (const exported of part.revisions.revisions) {
            const revision = decodeImportedRevision(exported);
            revisions.push(revision);
            bytes += revision.contentBytes;
          }
          if (revisions.length > start.revisionCount)
            throw planErrors.importInvalid(
              task.id,
              `more than the ${start.revisionCount} declared revisions arrived`,
            );
          if (bytes > transfer.maxImportBytes)
            throw planErrors.historyQuotaExceeded("bytes", transfer.maxImportBytes, 0);
        }
        const outcome = await transfer.importTask(caller, {
          bundle: { task, head, revisions },
          declaredCount: start.revisionCount,
          overwrite: start.overwrite,
          dryRun: start.dryRun,
        });
        return {
          outcome: encodeImportOutcome(outcome),
          revisions: revisions.length,
          contentBytes: bytes + (head?.contentBytes ?? 0),
          dryRun: start.dryRun,
        };
      })
      .then(
        (response) => {
          scope.succeeded();
          callback(null, response);
        },
        (error: unknown) => {
          const wire = scope.failed(error);
          callback({ code: wire.code, details: wire.details, metadata: wire.metadata });
        },
      );
  };
}
