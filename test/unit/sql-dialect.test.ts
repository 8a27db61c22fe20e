import { sqlDialect } from "../../src/storage/sql-dialect";

describe("the locking read of a write", () => {
  it.each(["mysql", "sqlite"] as const)(
    "on %s, an append's touches neither text (not even to measure it); other writes read both",
    (dialect) => {
      const sql = sqlDialect(dialect);
      const texts = (statement: string) => statement.match(/\b[pr]\.content\b(?!_)/g) ?? [];
      expect(texts(sql.lockForWrite(false))).toEqual([]);
      // A revision marked as holding HEAD's content reads it from HEAD (content_at_head).
      expect(new Set(texts(sql.lockForWrite(true)))).toEqual(new Set(["p.content", "r.content"]));
    },
  );
});
