import { InProcessTaskLock } from "../../../src/locking/in-process-task-lock";
import { LockUnavailableError } from "../../../src/plans/ports/task-lock";

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("InProcessTaskLock", () => {
  it("runs work for one task one at a time, first in first out", async () => {
    const lock = new InProcessTaskLock();
    const order: string[] = [];
    let release!: () => void;
    const first = lock.withLock("t", 1000, async () => {
      order.push("first:start");
      await new Promise<void>((resolve) => (release = resolve));
      order.push("first:end");
    });
    const second = lock.withLock("t", 1000, async () => void order.push("second"));
    const third = lock.withLock("t", 1000, async () => void order.push("third"));
    await tick();
    expect(order).toEqual(["first:start"]);
    release();
    await Promise.all([first, second, third]);
    expect(order).toEqual(["first:start", "first:end", "second", "third"]);
  });

  it("never makes different tasks wait on each other", async () => {
    const lock = new InProcessTaskLock();
    let release!: () => void;
    const held = lock.withLock("a", 1000, () => new Promise<void>((resolve) => (release = resolve)));
    await expect(lock.withLock("b", 1000, async () => "b ran")).resolves.toBe("b ran");
    release();
    await held;
  });

  it("rejects with LockUnavailableError after the wait, without running the work", async () => {
    const lock = new InProcessTaskLock();
    let release!: () => void;
    const held = lock.withLock("t", 1000, () => new Promise<void>((resolve) => (release = resolve)));
    const work = jest.fn(async () => undefined);
    await expect(lock.withLock("t", 20, work)).rejects.toBeInstanceOf(LockUnavailableError);
    expect(work).not.toHaveBeenCalled();
    release();
    await held;
    expect(lock.heldCount).toBe(0);
  });

  it("releases the lock when the work throws and leaves the table empty when idle", async () => {
    const lock = new InProcessTaskLock();
    await expect(lock.withLock("t", 100, async () => Promise.reject(new Error("boom")))).rejects.toThrow(
      "boom",
    );
    await expect(lock.withLock("t", 100, async () => "next")).resolves.toBe("next");
    expect(lock.heldCount).toBe(0);
  });

  it("with two slots lets two writers of a task in at once, queues the third, and empties when idle", async () => {
    const lock = new InProcessTaskLock(2);
    const running: string[] = [];
    const releases = new Map<string, () => void>();
    const enter = (name: string) =>
      lock.withLock("t", 1000, async () => {
        running.push(name);
        await new Promise<void>((resolve) => releases.set(name, resolve));
        running.splice(running.indexOf(name), 1);
      });
    const first = enter("first");
    const second = enter("second");
    const third = enter("third");
    await tick();
    expect(running).toEqual(["first", "second"]);
    expect(lock.waiting("t")).toBe(1);
    releases.get("second")?.();
    await tick();
    expect(running).toEqual(["first", "third"]);
    releases.get("first")?.();
    releases.get("third")?.();
    await Promise.all([first, second, third]);
    expect(lock.heldCount).toBe(0);
  });
});
