import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { planErrors, type PlanError } from "../../../src/plans/errors";

// REQ-TASKS-PLAN-APPEND-006 on the gRPC surface: the proto comments travel into every generated
// client, and error messages are what an agent reads after a rejection.
const protoDir = join(__dirname, "../../../proto/taskplans/v1");
const proto = readdirSync(protoDir)
  .map((file) => readFileSync(join(protoDir, file), "utf8"))
  .join("\n");

function commentBefore(marker: string): string {
  const lines = proto.split("\n");
  const at = lines.findIndex((line) => line.includes(marker));
  const comment: string[] = [];
  for (let i = at - 1; i >= 0 && lines[i]?.trim().startsWith("//"); i--)
    comment.unshift(lines[i]?.trim().slice(2).trim() ?? "");
  return comment.join(" ");
}

const updatePlan = commentBefore("rpc UpdatePlan(");
const createPlan = commentBefore("rpc CreatePlan(");

const allErrors: PlanError[] = [
  planErrors.invalidField("f", "is required"),
  planErrors.invalidWriteMode('"x"'),
  planErrors.createHasNoMode('"append"'),
  planErrors.contentRequired(),
  planErrors.fragmentBlank(),
  planErrors.versionRequired(),
  planErrors.reductionAckNotApplicable(),
  planErrors.taskNotReachable(),
  planErrors.taskNotFound("t"),
  planErrors.planNotFound("t"),
  planErrors.revisionNotFound("t", "r"),
  planErrors.taskExists("t"),
  planErrors.planExists("t"),
  planErrors.versionMismatch(),
  planErrors.writeConflict(),
  planErrors.planTooLarge(1, 1),
  planErrors.reductionNotAcknowledged(4000, 10),
  planErrors.planReadFailed(),
  planErrors.planReadFailed("write"),
  planErrors.planReadFailed("read"),
  planErrors.storageUnavailable(),
  planErrors.lockUnavailable(),
  planErrors.editTextRequired(),
  planErrors.editTextNotFound(),
  planErrors.editTextNotUnique(3),
  planErrors.revisionVersionRequired(),
  planErrors.revisionChanged(),
  planErrors.offsetOutOfRange(5, 4),
  planErrors.requestIdReused("r-1"),
];

describe("agent-facing texts of the contract (REQ-TASKS-PLAN-APPEND-006)", () => {
  it("AC-TASKS-PLAN-APPEND-006.1: UpdatePlan names both modes, the default, and what each submits", () => {
    expect(updatePlan).toContain("WRITE_MODE_REPLACE");
    expect(updatePlan).toContain("WRITE_MODE_APPEND");
    expect(updatePlan).toMatch(/WRITE_MODE_REPLACE, the default/);
    expect(updatePlan).toMatch(/REPLACE submits the whole document/);
    expect(updatePlan).toMatch(/APPEND submits only the addition/);
  });

  it("AC-TASKS-PLAN-APPEND-006.2: the overwrite warning is kept and scoped to replace", () => {
    expect(updatePlan).toMatch(
      /REPLACE submits the whole document\. It overwrites the entire plan: sending only a\s+section deletes the rest/,
    );
  });

  it("AC-TASKS-PLAN-APPEND-006.3: append places one blank line between the plan and the fragment", () => {
    expect(updatePlan).toMatch(/one blank\s+line, then the fragment/);
  });

  it("AC-TASKS-PLAN-APPEND-006.4: an append is not idempotent and resubmitting adds it again", () => {
    expect(updatePlan).toMatch(/not idempotent: resubmitting it adds the\s+fragment again/);
  });

  it("AC-TASKS-PLAN-APPEND-006.5: append needs no prior read", () => {
    expect(updatePlan).toMatch(/no prior read is needed/);
  });

  it("replace requires a version from a prior read or write and says why (seed 003)", () => {
    expect(updatePlan).toMatch(
      /requires expected_version, the version from a prior read or\s+write, so that a replacement never silently discards/,
    );
  });

  it("AC-TASKS-PLAN-APPEND-006.9: CreatePlan says it replaces the whole plan and names UpdatePlan append for a section", () => {
    expect(createPlan).toMatch(/always writes the whole document/);
    expect(createPlan).toMatch(/add a section .* UpdatePlan with WRITE_MODE_APPEND/);
  });

  const texts = [proto, ...allErrors.map((e) => `${e.message} ${e.notDoneMessage("Plan was not changed")}`)];

  it.each(texts.map((text, i) => [i, text]))(
    "AC-TASKS-PLAN-APPEND-006.7/006.9: text %d never says there is no append mode or prescribes read-and-resubmit to add a section",
    (_i, text) => {
      expect(text).not.toMatch(/no (append|partial)[- ](mode|update|write)/i);
      expect(text).not.toMatch(/(only|always) replaces?\b(?![^.]*this RPC)/i);
      expect(text).not.toMatch(/does not support append|append (is|isn't) (not )?(supported|available)/i);
      for (const sentence of String(text).split(/(?<=[.;])\s/)) {
        if (/add (a|the) section/i.test(sentence)) expect(sentence).toMatch(/append/i);
      }
    },
  );

  it("AC-TASKS-PLAN-APPEND-006.8: the reduction rejection names append, says where prior content lives, forbids rewriting from memory", () => {
    const message = planErrors.reductionNotAcknowledged(4000, 10).notDoneMessage("Plan was not changed");
    expect(message).toMatch(/^Plan was not changed because/);
    expect(message).toMatch(/mode append/);
    expect(message).toMatch(/revision history/);
    expect(message).toMatch(/Do not rewrite the plan from memory/);
  });
});
