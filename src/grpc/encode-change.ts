import { AuthorKind } from "../../generated/ts/taskplans/v1/plan";
import { type PlanChange, PlanChangeKind } from "../../generated/ts/taskplans/v1/plan_service";
import type { ChangeKind } from "../storage/records";
import type { WatchMessage } from "../watch/watch-service";
import { encodeAuthorKind, encodePlan } from "./encode";

const KIND: Readonly<Record<ChangeKind, PlanChangeKind>> = {
  created: PlanChangeKind.PLAN_CHANGE_KIND_CREATED,
  updated: PlanChangeKind.PLAN_CHANGE_KIND_UPDATED,
  reverted: PlanChangeKind.PLAN_CHANGE_KIND_REVERTED,
  deleted: PlanChangeKind.PLAN_CHANGE_KIND_DELETED,
  "implementation-started": PlanChangeKind.PLAN_CHANGE_KIND_IMPLEMENTATION_STARTED,
};

/** A watch message -> PlanChange; the plan carries its content only when the watch asked for it. */
export function encodeWatchMessage(message: WatchMessage, withContent: boolean): PlanChange {
  if (message.kind === "snapshot") {
    return {
      kind: PlanChangeKind.PLAN_CHANGE_KIND_SNAPSHOT,
      plan: message.plan ? encodePlan(message.plan, withContent) : undefined,
      revision: undefined,
      author: { kind: AuthorKind.AUTHOR_KIND_UNSPECIFIED, name: "" },
      committedAt: message.at,
    };
  }
  const { change } = message;
  return {
    kind: KIND[change.kind],
    plan: encodePlan({ ...change.plan, content: change.content ?? "" }, withContent),
    revision: change.revision ?? undefined,
    author: { kind: encodeAuthorKind(change.author.kind), name: change.author.name },
    committedAt: change.committedAt,
  };
}
