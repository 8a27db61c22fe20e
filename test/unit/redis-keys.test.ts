import { redisKeys } from "../../src/locking/redis-keys";

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
