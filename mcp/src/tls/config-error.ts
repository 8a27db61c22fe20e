// A copy of the service's src/config/config-error.ts: this package ships alone, and
// test/unit/mcp-tls-copies.test.ts keeps the copy in step with the service's.
/** Thrown for invalid configuration; the message names every offending variable. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}
