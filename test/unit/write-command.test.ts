import { planErrors } from "../../src/plans/errors";
import { afterReach, type WriteCommand } from "../../src/plans/write-command";
import type { ReadKind } from "../../src/plans/ports/records";

const command: WriteCommand<ReadKind, void> = {
  taskId: "t",
  reads: "metadata",
  decide: () => ({ commit: { kind: "delete-task", taskId: "t" }, events: [], result: undefined }),
};

describe("afterReach (checks reported after the task's reach, AC-TASKS-PLAN-APPEND-001.7)", () => {
  it("hands on the command its checks built", () => {
    expect(afterReach("t", () => command)).toBe(command);
  });

  it("carries a rule's refusal as a value, for the pipeline to raise after reach", () => {
    const refusal = planErrors.contentRequired();
    expect(
      afterReach("t", () => {
        throw refusal;
      }),
    ).toEqual({ taskId: "t", refusal });
  });

  it("lets any other error through: a bug is not a refusal", () => {
    expect(() =>
      afterReach("t", () => {
        throw new TypeError("bug");
      }),
    ).toThrow(TypeError);
  });
});
