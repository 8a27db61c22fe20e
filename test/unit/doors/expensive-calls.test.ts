import { ExpensiveCalls } from "../../../src/grpc/limits/expensive-calls";
import { PlanError } from "../../../src/plans/errors";

const refusal = (admit: () => unknown) => {
  try {
    admit();
  } catch (error) {
    return error instanceof PlanError ? [error.reason, { ...error.metadata, next_action: undefined }] : error;
  }
  throw new Error("admitted");
};

describe("the expensive-call limit", () => {
  it("refuses a caller past its own limit, and another caller still runs", () => {
    const calls = new ExpensiveCalls(2, 8);
    calls.admit("peer:a");
    calls.admit("peer:a");
    expect(refusal(() => calls.admit("peer:a"))).toEqual([
      "EXPENSIVE_CALLS_LIMITED",
      { limit: "caller", limit_calls: "2", retry_after_ms: "1000", next_action: undefined },
    ]);
    calls.admit("peer:b");
    expect(calls.inFlight).toBe(3);
  });

  it("refuses every caller past the replica's limit, and frees slots on release (twice is once)", () => {
    const calls = new ExpensiveCalls(4, 2);
    const first = calls.admit("peer:a");
    calls.admit("peer:b");
    expect(refusal(() => calls.admit("peer:c"))).toEqual([
      "EXPENSIVE_CALLS_LIMITED",
      { limit: "replica", limit_calls: "2", retry_after_ms: "1000", next_action: undefined },
    ]);
    first.release();
    first.release();
    expect(calls.inFlight).toBe(1);
    calls.admit("peer:c");
    expect(refusal(() => calls.admit("peer:d"))).toEqual(expect.arrayContaining(["EXPENSIVE_CALLS_LIMITED"]));
  });

  it("with 0 has no limit", () => {
    const calls = new ExpensiveCalls(0, 0);
    for (let i = 0; i < 100; i++) calls.admit("peer:a");
    expect(calls.inFlight).toBe(100);
  });
});
