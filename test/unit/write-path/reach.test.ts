import type { Caller } from "../../../src/auth/caller";
import { TaskWorkspaces, verifyReach } from "../../../src/plans/pipeline/reach";
import type { PlanStore } from "../../../src/plans/ports/plan-store";
import type { TaskRecord } from "../../../src/plans/ports/records";
import { reasonOf } from "../../harness/fixtures/reason-of";

const caller = (workspaces: string[], authenticated = true): Caller =>
  ({ authenticated, workspaces: new Set(workspaces) }) as unknown as Caller;
const task = (workspaceId: string): TaskRecord => ({
  id: "t-1",
  workspaceId,
  title: "",
  createdAt: new Date(0),
});

function storeWith(current: { task: TaskRecord | null }) {
  let reads = 0;
  const store = {
    getTask: async () => {
      reads++;
      return current.task;
    },
  } as unknown as PlanStore;
  return { store, reads: () => reads };
}

describe("the early reach check of writes", () => {
  it("reads a task once, then trusts what it learnt for callers that reach its workspace", async () => {
    const current = { task: task("ws-a") as TaskRecord | null };
    const { store, reads } = storeWith(current);
    const workspaces = new TaskWorkspaces();
    await workspaces.reachForWrite(store, caller(["ws-a"]), "t-1");
    await workspaces.reachForWrite(store, caller(["ws-a"]), "t-1");
    expect(reads()).toBe(1);
  });

  it("never refuses from memory: a caller outside the remembered workspace makes it read again", async () => {
    const current = { task: task("ws-a") as TaskRecord | null };
    const { store, reads } = storeWith(current);
    const workspaces = new TaskWorkspaces();
    await workspaces.reachForWrite(store, caller(["ws-a"]), "t-1");
    current.task = task("ws-b"); // deleted and re-created elsewhere
    await workspaces.reachForWrite(store, caller(["ws-b"]), "t-1");
    expect(reads()).toBe(2);
    await expect(workspaces.reachForWrite(store, caller(["ws-a"]), "t-1")).rejects.toMatchObject({
      reason: "TASK_NOT_REACHABLE",
    });
  });

  it("forgets the oldest task past its capacity", async () => {
    const { store, reads } = storeWith({ task: task("ws-a") });
    const workspaces = new TaskWorkspaces(2);
    for (const id of ["t-1", "t-2", "t-3", "t-1"])
      await workspaces.reachForWrite(store, caller(["ws-a"]), id);
    expect(reads()).toBe(4);
  });
});

describe("reach verified on the locked task row", () => {
  it.each([
    ["a task the caller reaches", caller(["ws-a"]), task("ws-a"), "ok"],
    ["a task in another workspace", caller(["ws-a"]), task("ws-b"), "TASK_NOT_REACHABLE"],
    ["a task gone, auth on", caller(["ws-a"]), null, "TASK_NOT_REACHABLE"],
    ["a task gone, auth off", caller([], false), null, "TASK_NOT_FOUND"],
  ])("%s", (_name, who, row, expected) => {
    expect(reasonOf(() => verifyReach(who, "t-1", row))).toBe(expected);
  });
});
