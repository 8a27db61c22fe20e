import { decodeReplay, encodeReplay, requestKey } from "../../src/plans/idempotency";
import { PlanError } from "../../src/plans/errors";

describe("request keys and replayed results", () => {
  it("fingerprints the method and payload: same payload same key, any change another", () => {
    const a = requestKey("r", "UpdatePlan", { content: "x", mode: "append" });
    expect(requestKey("r", "UpdatePlan", { content: "x", mode: "append" })).toEqual(a);
    expect(requestKey("r", "UpdatePlan", { content: "y", mode: "append" })?.fingerprint).not.toBe(
      a?.fingerprint,
    );
    expect(requestKey("r", "EditPlan", { content: "x", mode: "append" })?.fingerprint).not.toBe(
      a?.fingerprint,
    );
    expect(requestKey(undefined, "UpdatePlan", {})).toBeUndefined();
  });
  it("validates the id like other ids", () => {
    expect(() => requestKey("", "UpdatePlan", {})).toThrow(PlanError);
    expect(() => requestKey("a b", "UpdatePlan", {})).toThrow(PlanError);
  });
  it("round-trips a result: Dates come back as Dates, date-like strings stay strings", () => {
    const result = {
      plan: { title: "2026-11-29T12:00:00.000Z", createdAt: new Date("2026-11-29T12:00:00.000Z") },
      n: 3,
      t: null,
    };
    const back = decodeReplay<typeof result>(encodeReplay(result));
    expect(back).toEqual(result);
    expect(back.plan.createdAt).toBeInstanceOf(Date);
    expect(typeof back.plan.title).toBe("string");
  });
});
