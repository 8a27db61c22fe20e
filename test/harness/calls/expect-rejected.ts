import { planState } from "../model/plan-state";
import { type RpcFailure, rpcError } from "./rpc";
import type { TestApp } from "../servers/test-app";

/**
 * Asserts that a call fails with the documented code and reason, carries a next action, and changes
 * nothing: the task's plan (content, title, version) and revisions are unchanged and no event was
 * published. Write rejections must also say so first ("Plan was not changed because ...").
 */
export async function expectRejected(
  app: Pick<TestApp, "plans" | "events">,
  taskId: string,
  call: () => Promise<unknown>,
  expected: { code: number; reason: string; field?: string; write?: boolean },
): Promise<RpcFailure> {
  const before = await planState(app.plans, taskId);
  const events = app.events.published.length;
  const failure = await rpcError(call());
  expect([failure.code, failure.reason, failure.domain]).toEqual([
    expected.code,
    expected.reason,
    "taskplans",
  ]);
  expect(failure.metadata.next_action).toBeTruthy();
  expect(failure.message).toContain(failure.metadata.next_action ?? "-");
  if (expected.write !== false) expect(failure.message).toMatch(/^Plan was not changed because /);
  if (expected.field) expect(failure.fieldViolations.map((v) => v.field)).toEqual([expected.field]);
  expect(await planState(app.plans, taskId)).toEqual(before);
  expect(app.events.published.length).toBe(events);
  return failure;
}
