import { anonymousCaller, type Caller } from "../../../src/auth/caller";
import { type ContentRequest, createCommand, updateCommand } from "../../../src/plans/writes/content-request";
import { decideCommand, type TestState } from "../../harness/model/decide-content";
import { limits } from "../../../src/plans/rules/limits";
import type { Write, WriteEnv } from "../../../src/plans/pipeline/write-command";
import { reasonOf } from "../../harness/fixtures/reason-of";
import { headRecord, checklistEnv } from "../../harness/fixtures/records";

const env: WriteEnv = {
  now: new Date(1_000),
  coalesceWindowMs: 0,
  historyBudget: { maxRevisions: 0, maxBytes: 0 },
  newId: () => "id",
  ...checklistEnv,
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
    const write = updateCommand(anonymousCaller, { taskId: "t", ...request });
    if ("refusal" in write) throw write.refusal;
    decideCommand(write, state, env);
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

describe("the request key of CreatePlan and UpdatePlan (idempotency)", () => {
  const request = { taskId: "t", requestId: "req-1", content: "x", mode: "append" };
  const keyOf = (
    given: ContentRequest & { mode: string },
    caller: Caller = anonymousCaller,
    command: (caller: Caller, request: ContentRequest & { mode: string }) => Write<unknown> = updateCommand,
  ) => {
    const write = command(caller, given);
    if ("refusal" in write) throw write.refusal;
    return write.request;
  };
  const token = (subject: string): Caller => ({
    authenticated: true,
    subject,
    kind: "agent",
    name: "Agent",
    workspaces: "all",
  });

  it("is absent without a request id, and scoped to its owner", () => {
    expect(keyOf({ ...request, requestId: undefined })).toBeUndefined();
    const mine = keyOf(request, token("A"));
    const theirs = keyOf(request, token("B"));
    expect(mine?.id).toBe("req-1");
    expect(mine?.storedId).not.toBe(theirs?.storedId);
    expect(mine?.fingerprint).toBe(theirs?.fingerprint);
  });

  it("fingerprints every field that shapes the write, the mode as parsed, and the method", () => {
    const base = keyOf(request)?.fingerprint;
    const variants = [
      keyOf({ ...request, mode: "" }, anonymousCaller, createCommand),
      keyOf({ ...request, mode: "replace" }),
      keyOf({ ...request, content: "y" }),
      keyOf({ ...request, title: "T" }),
      keyOf({ ...request, expectedVersion: 3 }),
      keyOf({ ...request, mode: "replace", acknowledgeReduction: true }),
      keyOf({ ...request, author: { kind: "agent", name: "P" } }, token("A")),
    ].map((key) => key?.fingerprint);
    expect(new Set([base, ...variants]).size).toBe(variants.length + 1);
    // "" and "replace" are one mode: the fingerprint holds it as parsed.
    expect(keyOf({ ...request, mode: "" })?.fingerprint).toBe(
      keyOf({ ...request, mode: "replace" })?.fingerprint,
    );
    // The task id and the request id are not part of the payload.
    expect(keyOf({ ...request, taskId: "u" })?.fingerprint).toBe(base);
    expect(keyOf({ ...request, requestId: "req-2" })?.fingerprint).toBe(base);
  });

  it("checks the request id after the author's name and before the title (AC-TASKS-PLAN-APPEND-001.7)", () => {
    const refusal = (given: ContentRequest & { mode: string }) => {
      const write = updateCommand(anonymousCaller, given);
      return reasonOf(() => {
        if ("refusal" in write) throw write.refusal;
      }, true);
    };
    const longName = { kind: "agent" as const, name: "n".repeat(limits.maxAuthorNameChars + 1) };
    const longTitle = "t".repeat(limits.maxTitleChars + 1);
    expect(refusal({ ...request, requestId: " bad", author: longName, title: longTitle })).toBe(
      "INVALID_FIELD:author.name",
    );
    expect(refusal({ ...request, requestId: " bad", title: longTitle })).toBe("INVALID_FIELD:request_id");
    expect(refusal({ ...request, requestId: "ok", title: longTitle })).toBe("INVALID_FIELD:title");
    // With a token, the request's author is not the author, and its name is not checked.
    const signed = updateCommand(
      { authenticated: true, subject: "s", kind: "agent", name: "Signed", workspaces: "all" },
      { ...request, author: longName },
    );
    expect("refusal" in signed).toBe(false);
    expect(refusal({ ...request, requestId: "ok", content: " " })).toBe("FRAGMENT_BLANK");
    expect(refusal(request)).toBe("ok");
  });
});
