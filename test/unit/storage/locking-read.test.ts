import { lockingReadOf } from "../../../src/storage/locked-task";

describe("the locking read of a write", () => {
  it.each(["mysql", "sqlite"] as const)(
    "on %s, an append's touches neither text (not even to measure it); other writes read both",
    (dialect) => {
      const texts = (statement: string) => statement.match(/\b[pr]\.content\b(?!_)/g) ?? [];
      expect(texts(lockingReadOf(dialect, "metadata"))).toEqual([]);
      // A revision marked as holding HEAD's content reads it from HEAD (content_at_head).
      expect(new Set(texts(lockingReadOf(dialect, "content")))).toEqual(new Set(["p.content", "r.content"]));
    },
  );
});
