import type { PlanServiceServer } from "@taskplans/contract";
import type { ChangeQueries } from "../plans/change-queries";
import type { PlanQueries } from "../plans/plan-queries";
import type { PlanService } from "../plans/plan-service";
import {
  decodeAuthor,
  decodeWriteMode,
  encodePlan,
  encodeRange,
  encodeRestoreResult,
  encodeRevision,
  encodeWriteResult,
} from "./encode/encode";
import { encodePlanChanges, encodeRevisionDiff } from "./encode/encode-diff";
import type { RawServer } from "./wire/received-request";
import { unary } from "./unary";
import type { WatchService } from "../watch/watch-service";
import { type WatchDeps, watchPlanHandler } from "./watch/watch-handler";

/** PlanService handlers: decode -> service -> encode. */
export function planHandlers(
  service: PlanService,
  queries: PlanQueries,
  changes: ChangeQueries,
  watches: WatchService,
  deps: WatchDeps,
): RawServer<PlanServiceServer> {
  return {
    watchPlan: watchPlanHandler(watches, deps),
    getPlan: unary("GetPlan", deps, async (request, { caller }) => {
      const { plan, range } = await queries.getPlan(caller, {
        taskId: request.taskId,
        offset: request.offset,
        limit: request.limit,
        expectedVersion: request.expectedVersion,
      });
      return encodeRange(plan, range);
    }),
    editPlan: unary("EditPlan", deps, async (request, { caller, write }) =>
      encodeWriteResult(
        await service.editPlan(
          caller,
          {
            taskId: request.taskId,
            expectedVersion: request.expectedVersion,
            oldText: request.oldText,
            newText: request.newText,
            acknowledgeReduction: request.acknowledgeReduction,
            author: decodeAuthor(request.author),
            requestId: request.requestId,
            merge: request.merge,
          },
          write,
        ),
      ),
    ),
    restorePlanRevision: unary("RestorePlanRevision", deps, async (request, { caller, write }) =>
      encodeRestoreResult(
        await service.restoreRevision(
          caller,
          {
            taskId: request.taskId,
            revisionId: request.revisionId,
            expectedVersion: request.expectedVersion,
            expectedRevisionVersion: request.expectedRevisionVersion,
            author: decodeAuthor(request.author),
            requestId: request.requestId,
          },
          write,
        ),
      ),
    ),
    createPlan: unary("CreatePlan", deps, async (request, { caller, write }) =>
      encodeWriteResult(
        await service.createPlan(
          caller,
          {
            taskId: request.taskId,
            title: request.title,
            content: request.content,
            author: decodeAuthor(request.author),
            expectedVersion: request.expectedVersion,
            acknowledgeReduction: request.acknowledgeReduction,
            // CreatePlan accepts no mode; an unspecified one decodes to "" (absent).
            mode: decodeWriteMode(request.mode),
            requestId: request.requestId,
            merge: request.merge,
          },
          write,
        ),
      ),
    ),
    updatePlan: unary("UpdatePlan", deps, async (request, { caller, write }) =>
      encodeWriteResult(
        await service.updatePlan(
          caller,
          {
            taskId: request.taskId,
            title: request.title,
            content: request.content,
            mode: decodeWriteMode(request.mode),
            expectedVersion: request.expectedVersion,
            acknowledgeReduction: request.acknowledgeReduction,
            author: decodeAuthor(request.author),
            requestId: request.requestId,
            merge: request.merge,
          },
          write,
        ),
      ),
    ),
    savePlan: unary("SavePlan", deps, async (request, { caller, write }) =>
      encodeWriteResult(
        await service.savePlan(
          caller,
          {
            taskId: request.taskId,
            title: request.title,
            content: request.content,
            author: decodeAuthor(request.author),
          },
          write,
        ),
      ),
    ),
    deletePlan: unary("DeletePlan", deps, async (request, { caller, write }) => {
      await service.deletePlan(
        caller,
        { taskId: request.taskId, expectedVersion: request.expectedVersion },
        write,
      );
      return {};
    }),
    listPlanRevisions: unary("ListPlanRevisions", deps, async (request, { caller }) => {
      const page = await queries.listRevisions(caller, {
        taskId: request.taskId,
        pageSize: request.pageSize,
        pageToken: request.pageToken,
      });
      return { revisions: page.revisions.map(encodeRevision), nextPageToken: page.nextPageToken };
    }),
    getPlanRevision: unary("GetPlanRevision", deps, async (request, { caller }) => ({
      revision: encodeRevision(
        await queries.getRevision(caller, { taskId: request.taskId, revisionId: request.revisionId }),
      ),
    })),
    getPlanChanges: unary("GetPlanChanges", deps, async (request, { caller }) =>
      encodePlanChanges(
        await changes.getPlanChanges(caller, { taskId: request.taskId, sinceVersion: request.sinceVersion }),
      ),
    ),
    diffPlanRevisions: unary("DiffPlanRevisions", deps, async (request, { caller }) =>
      encodeRevisionDiff(
        await changes.diffRevisions(caller, {
          taskId: request.taskId,
          fromRevisionId: request.fromRevisionId,
          toRevisionId: request.toRevisionId,
        }),
      ),
    ),
    revertPlan: unary("RevertPlan", deps, async (request, { caller, write }) =>
      encodeWriteResult(
        await service.revertPlan(
          caller,
          {
            taskId: request.taskId,
            revisionId: request.revisionId,
            author: decodeAuthor(request.author),
          },
          write,
        ),
      ),
    ),
    markImplementationStarted: unary(
      "MarkImplementationStarted",
      deps,
      async (request, { caller, write }) => ({
        plan: encodePlan(
          await service.markImplementationStarted(
            caller,
            { taskId: request.taskId, sessionId: request.sessionId, actor: request.actor },
            write,
          ),
          true,
        ),
      }),
    ),
  };
}
