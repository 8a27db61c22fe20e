import { contentRequestKey, validateContentWrite } from "../../src/plans/content-checks";
import { decideContentWrite, type TestState } from "../harness/decide-content";
import { limits } from "../../src/plans/limits";
import type { WriteEnv } from "../../src/plans/write-command";
import { parseWriteMode } from "../../src/plans/write-mode";
import { reasonOf } from "../harness/reason-of";
import { headRecord } from "../harness/records";

const agent = { kind: "agent" as const, name: "Agent" };
const env: WriteEnv = {
  now: new Date(1_000),
  coalesceWindowMs: 0,
  historyBudget: { maxRevisions: 0, maxBytes: 0 },
  newId: () => "id",
};
const LIMIT = limits.maxPlanBytes;

const noPlan: TestState = { taskId: "t", head: null, latest: null };
// A HEAD as an append locks it: no content read, only the recorded sizes (`bytes` of plain ASCII).
function planOf(content: string | null, bytes: number): TestState {
  const head: TestState["head"] = {
    ...headRecord(""),
    content,
    contentBytes: bytes,
    contentChars: bytes,
    trimmedBytes: bytes,
    trimmedChars: bytes,
  };
  return { taskId: "t", head, latest: null };
}

/**
 * An UpdatePlan's pure steps in the order the service runs them: mode validity, (task reach: I/O,
 * tested in conditional-writes.test.ts), content validity before the lock, then under it plan
 * existence and the size of the composed content. The read of the stored plan (003.5) fails in the
 * store, between the last two.
 */
const firstFailure = (
  request: { mode: string; content: string; acknowledgeReduction?: boolean },
  state: TestState,
) =>
  reasonOf(() => {
    const mode = parseWriteMode(request.mode);
    const write = validateContentWrite({ taskId: "t", ...request }, { path: "agent-update", mode }, agent);
    decideContentWrite(write, state, env);
  });

describe("AC-TASKS-PLAN-APPEND-001.7: one failure, the first in order", () => {
  const oversized = "x".repeat(LIMIT);
  it("mode validity before everything", () => {
    expect(firstFailure({ mode: "bogus", content: "" }, noPlan)).toBe("INVALID_WRITE_MODE");
    expect(firstFailure({ mode: "bogus", content: "  " }, planOf(null, LIMIT))).toBe("INVALID_WRITE_MODE");
  });

  it("content validity (001.4, 001.5) before plan existence and size", () => {
    expect(firstFailure({ mode: "append", content: "" }, noPlan)).toBe("CONTENT_REQUIRED");
    expect(firstFailure({ mode: "append", content: " \n\t" }, noPlan)).toBe("FRAGMENT_BLANK");
    expect(firstFailure({ mode: "append", content: "x", acknowledgeReduction: true }, noPlan)).toBe(
      "REDUCTION_ACK_NOT_APPLICABLE",
    );
  });

  it("plan existence (001.6) before the size of the composed content (007.2)", () => {
    expect(firstFailure({ mode: "append", content: oversized }, noPlan)).toBe("PLAN_NOT_FOUND");
    expect(firstFailure({ mode: "append", content: oversized }, planOf(null, 10))).toBe("PLAN_TOO_LARGE");
    // The limit is on the composed content: exactly at the limit is accepted (separator included).
    const fits = "x".repeat(LIMIT - 10 - 2);
    expect(firstFailure({ mode: "append", content: fits }, planOf(null, 10))).toBe("ok");
    expect(firstFailure({ mode: "append", content: `${fits}x` }, planOf(null, 10))).toBe("PLAN_TOO_LARGE");
  });

  it("a replace keeps its size check before the lock (007.5: unchanged point of evaluation)", () => {
    expect(firstFailure({ mode: "replace", content: `${oversized}x` }, noPlan)).toBe("PLAN_TOO_LARGE");
    expect(firstFailure({ mode: "replace", content: "short" }, noPlan)).toBe("PLAN_NOT_FOUND");
  });
});

describe("contentRequestKey (idempotency of CreatePlan and UpdatePlan)", () => {
  const request = { taskId: "t", requestId: "req-1", content: "x" };
  it("is absent without a request id, and scoped to its owner", () => {
    expect(
      contentRequestKey("UpdatePlan", { ...request, requestId: undefined }, "append", "a"),
    ).toBeUndefined();
    const mine = contentRequestKey("UpdatePlan", request, "append", "author:agent:A");
    const theirs = contentRequestKey("UpdatePlan", request, "append", "author:agent:B");
    expect(mine?.id).toBe("req-1");
    expect(mine?.storedId).not.toBe(theirs?.storedId);
    expect(mine?.fingerprint).toBe(theirs?.fingerprint);
  });

  it("fingerprints every field that shapes the write, and the method", () => {
    const base = contentRequestKey("UpdatePlan", request, "append", "o")?.fingerprint;
    const variants = [
      contentRequestKey("CreatePlan", request, "append", "o"),
      contentRequestKey("UpdatePlan", request, "replace", "o"),
      contentRequestKey("UpdatePlan", { ...request, content: "y" }, "append", "o"),
      contentRequestKey("UpdatePlan", { ...request, title: "T" }, "append", "o"),
      contentRequestKey("UpdatePlan", { ...request, expectedVersion: 3 }, "append", "o"),
      contentRequestKey("UpdatePlan", { ...request, acknowledgeReduction: true }, "append", "o"),
      contentRequestKey(
        "UpdatePlan",
        { ...request, author: { kind: "user", name: "P" } as never },
        "append",
        "o",
      ),
    ].map((key) => key?.fingerprint);
    expect(new Set([base, ...variants]).size).toBe(variants.length + 1);
    // The task id and the request id are not part of the payload.
    expect(contentRequestKey("UpdatePlan", { ...request, taskId: "u" }, "append", "o")?.fingerprint).toBe(
      base,
    );
  });
});
