/**
 * @taskplans/cli: `planctl`, the task-plan service on the command line (docs/planctl.md). The
 * executable is `dist/main.js`; these exports let a program embed it or reuse its text hygiene.
 */
export {
  checklistCell,
  checklistField,
  checklistJson,
  type ChecklistJson,
  checklistWords,
} from "./checklist-text";
export { completionScript, type Shell } from "./completion";
export { type Context, type ContextsFile, contextsPath, readContexts } from "./contexts";
export { EXIT, type Failure, failureOf, UsageError } from "./failures";
export { planMetaLines } from "./plan-meta";
export { buildProgram, runPlanctl, VERSION } from "./program";
export { type Io } from "./runtime";
export { safeJson, terminalLine, terminalText } from "./terminal-text";
