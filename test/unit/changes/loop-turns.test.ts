import { LoopTurns } from "../../../src/plans/changes/loop-turns";

describe("turns of the event loop, one at a time", () => {
  it("hands them out in the order asked, each on a turn of its own (other callbacks run between)", async () => {
    const turns = new LoopTurns();
    const order: string[] = [];
    const done = [1, 2, 3].map((n) =>
      turns.turn().then(() => {
        order.push(String(n));
        if (n === 1) setImmediate(() => order.push("other"));
      }),
    );
    await Promise.all(done);
    expect(order).toEqual(["1", "2", "other", "3"]);
  });
});
