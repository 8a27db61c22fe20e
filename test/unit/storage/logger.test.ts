import { QueryFailedError } from "typeorm";
import { capturingLogger } from "../../harness/fixtures/capturing-logger";

describe("the service's logger", () => {
  it("logs a database error without its statement or values, which hold plan content", () => {
    const { logger, lines } = capturingLogger();
    const driverError = Object.assign(new Error("Lock wait timeout exceeded"), {
      code: "ER_LOCK_WAIT_TIMEOUT",
      errno: 1205,
      sql: "UPDATE task_plans SET content = '# SECRET PLAN' WHERE task_id = 't'",
    });
    const sql = "UPDATE task_plans SET content = ? WHERE task_id = ?";
    logger.error({ err: new QueryFailedError(sql, ["# SECRET PLAN", "t"], driverError) }, "failed");
    logger.error({ err: driverError }, "failed");

    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line).not.toContain("SECRET");
      const { err } = JSON.parse(line) as { err: Record<string, unknown> };
      expect(err.message).toBe("Lock wait timeout exceeded");
      expect(err.stack).toEqual(expect.stringContaining("Lock wait timeout exceeded"));
      expect(JSON.stringify(err)).toContain("ER_LOCK_WAIT_TIMEOUT");
    }
    expect(JSON.parse(lines[0] ?? "{}").err.type).toBe("QueryFailedError");
  });
});
