import { anonymousCaller } from "../../../src/auth/caller";
import { requestIdOwner, requestKey } from "../../../src/plans/pipeline/idempotency";
import { PlanError } from "../../../src/plans/errors";
import { optionalId } from "../../../src/plans/rules/validate";

describe("request keys", () => {
  it("fingerprints the method and payload: same payload same key, any change another", () => {
    const a = requestKey("r", "author:agent:A", "UpdatePlan", { content: "x", mode: "append" });
    expect(requestKey("r", "author:agent:A", "UpdatePlan", { content: "x", mode: "append" })).toEqual(a);
    expect(
      requestKey("r", "author:agent:A", "UpdatePlan", { content: "y", mode: "append" })?.fingerprint,
    ).not.toBe(a?.fingerprint);
    expect(
      requestKey("r", "author:agent:A", "EditPlan", { content: "x", mode: "append" })?.fingerprint,
    ).not.toBe(a?.fingerprint);
    expect(requestKey(undefined, "author:agent:A", "UpdatePlan", {})).toBeUndefined();
  });
  it("scopes the id to its owner: another caller's same id is another stored key, same payload fingerprint", () => {
    const mine = requestKey("r", "subject:alice", "UpdatePlan", { content: "x" });
    const theirs = requestKey("r", "subject:bob", "UpdatePlan", { content: "x" });
    expect(mine?.storedId).not.toBe(theirs?.storedId);
    expect(mine?.fingerprint).toBe(theirs?.fingerprint);
    expect([mine?.id, mine?.storedId.length]).toEqual(["r", 64]); // fits the 128-character column
    const kinds = [
      requestIdOwner({ ...anonymousCaller }, { kind: "agent", name: "A" }),
      requestIdOwner({ ...anonymousCaller }, { kind: "user", name: "A" }),
      requestIdOwner({ ...anonymousCaller, authenticated: true, subject: "s" }, { kind: "agent", name: "A" }),
    ];
    expect(kinds).toEqual(["author:agent:A", "author:user:A", "subject:s"]);
  });
  it("takes the id as its caller checked it: optionalId validates it like other ids", () => {
    expect(() => optionalId("request_id", "")).toThrow(PlanError);
    expect(() => optionalId("request_id", "a b")).toThrow(PlanError);
    expect(optionalId("request_id", undefined)).toBeUndefined();
    expect(requestKey(optionalId("request_id", "r-1"), "author:agent:A", "UpdatePlan", {})?.id).toBe("r-1");
  });
});
