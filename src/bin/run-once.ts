/**
 * Runs a one-shot command (migrate, backup, restore-fence): exit 0 once `work` is done (it printed
 * its own result), or exit 1 with one line on stderr, `<name> failed: <message>`, whitespace folded
 * so that a multi-line driver error stays one line for the log collector and the operator.
 */
export function runOnce(name: string, work: () => Promise<void>): void {
  work().then(
    () => process.exit(0),
    (error: unknown) => {
      const text = error instanceof Error ? error.message : String(error);
      process.stderr.write(`${name} failed: ${text.replace(/\s+/g, " ")}\n`);
      process.exit(1);
    },
  );
}
