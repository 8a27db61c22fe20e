import { decideLeaseUse, isContended } from "../../../src/locking/lease-policy";

const settings = { maxBatch: 3, retryDelayMs: 20 };
const now = 1_000_000;
const lease = { uses: 0, retiring: false, lost: false, contendedAt: 0 };

describe("decideLeaseUse (keep, renew or hand on a held lease)", () => {
  it("takes writes under the lease until the batch is spent", () => {
    expect(decideLeaseUse({ ...lease, uses: 0 }, now, settings)).toBe("use");
    expect(decideLeaseUse({ ...lease, uses: 2 }, now, settings)).toBe("use");
    // Contention does not cut a batch short.
    expect(decideLeaseUse({ ...lease, uses: 2, contendedAt: now }, now, settings)).toBe("use");
  });

  it("starts a new batch when nobody waits, and retires when another replica waits", () => {
    expect(decideLeaseUse({ ...lease, uses: 3 }, now, settings)).toBe("new-batch");
    expect(decideLeaseUse({ ...lease, uses: 3, contendedAt: now - 80 }, now, settings)).toBe("retire");
    expect(decideLeaseUse({ ...lease, uses: 3, contendedAt: now - 81 }, now, settings)).toBe("new-batch");
  });

  it("takes nothing under a retiring or lost lease", () => {
    expect(decideLeaseUse({ ...lease, retiring: true }, now, settings)).toBe("closed");
    expect(decideLeaseUse({ ...lease, lost: true }, now, settings)).toBe("closed");
  });
});

describe("isContended", () => {
  it("remembers a waiter for 4 retry delays, and at least 50 ms", () => {
    expect(isContended(now - 80, now, 20)).toBe(true);
    expect(isContended(now - 81, now, 20)).toBe(false);
    expect(isContended(now - 50, now, 1)).toBe(true);
    expect(isContended(now - 51, now, 1)).toBe(false);
    expect(isContended(0, now, 20)).toBe(false);
  });
});
