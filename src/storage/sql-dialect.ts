/** The two databases the service runs on: SQLite (the embedded default) and MySQL/MariaDB. */
export type Dialect = "sqlite" | "mysql";

/** The SQL the two databases spell differently, in one place. */
export interface SqlDialect {
  /** The size in bytes of the stored text in `column` (the database measures it). */
  byteLength(column: string): string;
  /**
   * `column`'s kept prefix followed by the suffix: two bound parameters, the prefix's length as
   * `keptLength` measures it, then the suffix.
   */
  keepPrefixThen(column: string): string;
  /** The length of an append's kept prefix in the unit keepPrefixThen cuts by. */
  keptLength(change: { readonly keepChars: number; readonly keepBytes: number }): number;
}

const DIALECTS: Record<Dialect, SqlDialect> = {
  mysql: {
    byteLength: (column) => `OCTET_LENGTH(${column})`,
    // MySQL strings carry their length: LEFT counts utf8mb4 characters (code points), NUL included.
    keepPrefixThen: (column) => `CONCAT(LEFT(${column}, ?), ?)`,
    keptLength: (change) => change.keepChars,
  },
  sqlite: {
    byteLength: (column) => `length(CAST(${column} AS BLOB))`,
    // SQLite's text functions (substr, length) stop at the first U+0000; cut the bytes instead (a
    // BLOB's substr counts bytes and reads them all), which the trimmed byte length says exactly.
    // The substr of an empty BLOB is NULL, not empty: COALESCE keeps an append to "" from NULL.
    keepPrefixThen: (column) => `COALESCE(CAST(substr(CAST(${column} AS BLOB), 1, ?) AS TEXT), '') || ?`,
    keptLength: (change) => change.keepBytes,
  },
};

export function sqlDialect(dialect: Dialect): SqlDialect {
  return DIALECTS[dialect];
}
