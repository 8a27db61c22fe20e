// The page's view of the contract: the protobuf-es descriptors only (generated/protobuf-es.ts), never
// the package root, whose ts-proto tree is built for Node (grpc-js). tsconfig.console.json's `paths`
// resolve this import for the type checker and for esbuild (scripts/build-console.mjs).
import type { Plan, PlanDiff, PlanRevision } from "@taskplans/contract/protobuf-es";

export { ErrorInfoSchema, PlanChangeKind, PlanService } from "@taskplans/contract/protobuf-es";

/** A plan as GetPlan and WatchPlan give it. */
export type PlanView = Plan;
/** A revision as ListPlanRevisions (content empty) and GetPlanRevision give it. */
export type RevisionView = PlanRevision;
/** A diff as DiffPlanRevisions gives it. */
export type PlanDiffView = PlanDiff;
