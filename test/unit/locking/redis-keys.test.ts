import { parseWaitingMessage, redisKeys, waitingMessage } from "../../../src/locking/redis-keys";
import { changeMessage, changeMessageTaskId, parseChangeMessage } from "../../../src/watch/change-message";

describe("redis key builder", () => {
  const keys = redisKeys("taskplans");
  it("hash-tags the task id so each task's keys share one cluster slot", () => {
    expect(keys.lock("task-1")).toBe("taskplans:lock:{task-1}");
  });
  it("percent-encodes braces and '%' so an id cannot move the hash tag", () => {
    expect(keys.lock("a}b{c%")).toBe("taskplans:lock:{a%7db%7bc%25}");
    expect(keys.lock("a%7db")).not.toBe(keys.lock("a}b"));
  });
});

describe("change notification messages", () => {
  it("round-trip a change key and a keyless notification", () => {
    expect(changeMessage("task-1", { version: 12, step: 1 })).toBe("task-1\t12.1");
    expect(parseChangeMessage(changeMessage("task-1", { version: 12, step: 1 }))).toEqual({
      taskId: "task-1",
      key: { version: 12, step: 1 },
      payload: "",
    });
    expect(parseChangeMessage(changeMessage("a b", null))).toEqual({ taskId: "a b", key: null, payload: "" });
    const payload = '{"a":"tab\there"}';
    expect(parseChangeMessage(changeMessage("t", { version: 3, step: 0 }, payload))?.payload).toBe(payload);
  });
  it("ignore anything else", () => {
    for (const junk of ["", "task", "task\t", "task\t1", "task\t1.2", "\t1.0", "task\tx.0"])
      expect(parseChangeMessage(junk)).toBeNull();
  });
  it("give their task id without parsing the payload (empty when there is none)", () => {
    expect(changeMessageTaskId(changeMessage("a b", { version: 3, step: 0 }, '{"x":"\t"}'))).toBe("a b");
    expect(changeMessageTaskId(changeMessage("t", null))).toBe("t");
    expect(changeMessageTaskId("no tab")).toBe("");
  });
});

describe("lock waiting messages", () => {
  it("round-trip an instance id and a task id (which may hold spaces)", () => {
    const instanceId = "0f8fad5b-d9cb-469f-a165-70867728950e";
    expect(waitingMessage(instanceId, "task 1")).toBe(`${instanceId} task 1`);
    expect(parseWaitingMessage(waitingMessage(instanceId, "task 1"))).toEqual({
      instanceId,
      taskId: "task 1",
    });
  });
  it("ignore anything else", () => {
    for (const junk of ["", "instance", " task", "instance "]) expect(parseWaitingMessage(junk)).toBeNull();
  });
});
