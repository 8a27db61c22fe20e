import { anonymousCaller } from "../../../src/auth/caller";
import {
  createCommand,
  editCommand,
  saveCommand,
  updateCommand,
} from "../../../src/plans/writes/content-request";
import {
  deletePlanCommand,
  deleteTaskCommand,
  restoreCommand,
  revertCommand,
} from "../../../src/plans/writes/history-request";
import { markCommand } from "../../../src/plans/writes/mark-started";
import { WRITE_KINDS, type WriteKind } from "../../../src/plans/ports/write-metrics";
import type { Write } from "../../../src/plans/pipeline/write-command";

// The `mode` label of taskplans_writes_total: each use case names its kind, from a fixed set.
const kindOf = (write: Write<unknown>): WriteKind | "refused" =>
  "refusal" in write ? "refused" : write.kind;

describe("the kind each write command declares", () => {
  const caller = anonymousCaller;
  const content = { taskId: "t", content: "# Plan\n" };
  const built: [string, Write<unknown>, WriteKind][] = [
    ["CreatePlan", createCommand(caller, { ...content, mode: "" }), "create"],
    [
      "CreatePlan over a plan (conditional)",
      createCommand(caller, { ...content, mode: "", expectedVersion: 3 }),
      "create",
    ],
    [
      "UpdatePlan replace",
      updateCommand(caller, { ...content, mode: "replace", expectedVersion: 1 }),
      "replace",
    ],
    ["UpdatePlan append", updateCommand(caller, { ...content, mode: "append" }), "append"],
    [
      "EditPlan",
      editCommand(caller, { taskId: "t", oldText: "a", newText: "b", acknowledgeReduction: false }),
      "edit",
    ],
    ["SavePlan", saveCommand(caller, { taskId: "t", content: "" }), "save"],
    [
      "RestorePlanRevision",
      restoreCommand(caller, { taskId: "t", revisionId: "r", expectedRevisionVersion: "1" }),
      "restore",
    ],
    ["RevertPlan", revertCommand(caller, { taskId: "t", revisionId: "r" }), "revert"],
    ["DeletePlan", deletePlanCommand(caller, { taskId: "t" }), "delete"],
    ["DeleteTask", deleteTaskCommand("t"), "delete_task"],
    ["MarkImplementationStarted", markCommand(caller, { taskId: "t", sessionId: "s", actor: "" }), "mark"],
  ];

  it.each(built)("%s is counted as its kind", (_name, write, kind) => {
    expect(kindOf(write)).toBe(kind);
  });

  it("uses every kind of the fixed set, and no other", () => {
    // ImportTask is no command: it runs in the pipeline's serialized region as "import" (issue 54).
    expect(new Set([...built.map(([, write]) => kindOf(write)), "import"])).toEqual(new Set(WRITE_KINDS));
  });
});
