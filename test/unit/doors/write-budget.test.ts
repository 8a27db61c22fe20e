import { decodeStatusDetails } from "@taskplans/contract";
import { toWireError } from "../../../src/grpc/error-mapping";
import { StoredBytesWindow } from "../../../src/grpc/limits/stored-bytes-window";
import { writeBudget } from "../../../src/grpc/limits/write-budget";
import { PlanError } from "../../../src/plans/errors";

function refusal(admit: () => void): PlanError {
  try {
    admit();
  } catch (error) {
    if (error instanceof PlanError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("StoredBytesWindow: bytes per key over a sliding window", () => {
  it("counts a charge for exactly its window, per key", () => {
    const window = new StoredBytesWindow(60_000);
    window.charge("a", 100, 1_000);
    window.charge("b", 7, 1_000);
    window.charge("a", 50, 30_000);
    expect([window.total("a", 30_000), window.total("b", 30_000)]).toEqual([150, 7]);
    expect(window.total("a", 60_999)).toBe(150);
    expect(window.total("a", 61_000)).toBe(50); // the first charge left the window
    expect(window.total("a", 90_000)).toBe(0);
    expect(window.size).toBe(1); // a, read once empty, is forgotten; b expired unread
  });

  it("says when enough bytes leave the window to be below a limit", () => {
    const window = new StoredBytesWindow(60_000);
    window.charge("a", 400, 0);
    window.charge("a", 400, 10_000);
    window.charge("a", 400, 20_000);
    expect(window.msUntilBelow("a", 1_000, 25_000)).toBe(35_000); // the first leaves at 60 s
    expect(window.msUntilBelow("a", 500, 25_000)).toBe(45_000); // the second must go too
    expect(window.msUntilBelow("a", 1_300, 25_000)).toBe(0); // already below
    expect(window.msUntilBelow("nobody", 1, 25_000)).toBe(0);
  });

  it("merges charges within one bucket, never letting them leave early, and holds a bounded number per key", () => {
    const window = new StoredBytesWindow(60_000, 10, 20); // buckets of 3 s
    for (let t = 0; t < 600_000; t += 100) window.charge("a", 1, t);
    // A steady writer keeps one window's worth (plus at most a bucket): not its whole history.
    const total = window.total("a", 599_900);
    expect(total).toBeGreaterThanOrEqual(600);
    expect(total).toBeLessThanOrEqual(630);
    window.charge("b", 10, 0);
    window.charge("b", 10, 2_999); // same bucket: leaves with its later charge
    expect(window.total("b", 60_500)).toBe(20);
    expect(window.total("b", 62_999)).toBe(0);
  });

  it("holds at most maxKeys keys, evicting the least recently charged", () => {
    const window = new StoredBytesWindow(60_000, 3);
    for (const [i, key] of ["a", "b", "c"].entries()) window.charge(key, 10, i);
    window.charge("a", 10, 5); // a is now the most recent
    window.charge("d", 10, 6); // evicts b
    expect(window.size).toBe(3);
    expect(["a", "b", "c", "d"].map((key) => window.total(key, 7))).toEqual([20, 0, 10, 10]);
  });
});

describe("writeBudget: admit before a write, charge after it", () => {
  it("admits while the caller's window is below the budget, then refuses with WRITE_BUDGET_EXCEEDED and RetryInfo", () => {
    let now = 0;
    const budget = writeBudget(1_000, 60_000, () => now);
    budget.admit("subject:a");
    budget.charge("subject:a", 600);
    now = 10_000;
    budget.admit("subject:a"); // 600 < 1,000: the size of the next write is not known yet
    budget.charge("subject:a", 600);
    now = 20_000;
    const refused = refusal(() => budget.admit("subject:a"));
    expect(refused.reason).toBe("WRITE_BUDGET_EXCEEDED");
    expect(refused.metadata).toMatchObject({
      limit_bytes: "1000",
      window_ms: "60000",
      retry_after_ms: "40000",
    });
    const wire = toWireError(refused, "req-1", "Plan was not changed");
    expect(wire.code).toBe(8); // RESOURCE_EXHAUSTED
    expect(decodeStatusDetails(wire.metadata)?.retryInfo?.retryDelay).toEqual({ seconds: 40, nanos: 0 });
    budget.admit("subject:b"); // another caller
    now = 60_000; // the first 600 left the window
    budget.admit("subject:a");
  });

  it("with a budget of 0 admits everything and counts nothing", () => {
    const budget = writeBudget(0, 60_000);
    budget.charge("k", 1e12);
    expect(() => budget.admit("k")).not.toThrow();
  });
});
