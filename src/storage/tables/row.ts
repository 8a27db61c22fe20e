import { type CorruptContent, StorageCorruptionError } from "../../plans/ports/store-errors";

/** One row as both drivers return it: mysql2 may give a BIGINT as a string, SQLite a flag as 0/1. */
export type Row = Record<string, string | number | null | undefined>;

/** A query on some connection or transaction: SQL with `?` placeholders, and its parameters. */
export type Query = (sql: string, parameters: unknown[]) => Promise<unknown>;

/** The value of a column of `row`, read under `prefix` (the alias a joined read gave it). */
export type Cell = (column: string) => string | number | null | undefined;

export function cellsOf(row: Row, prefix: string): Cell {
  if (prefix === "") return (column) => row[column];
  const keys = aliasesOf(prefix);
  return (column) => row[(keys[column] ??= prefix + column)];
}

// Each prefix's aliased column names, made once: a codec reads some forty cells per write, and a
// concatenated key would be built and hashed on every read.
const ALIASES = new Map<string, Record<string, string>>();
function aliasesOf(prefix: string): Record<string, string> {
  let keys = ALIASES.get(prefix);
  if (!keys) ALIASES.set(prefix, (keys = Object.create(null) as Record<string, string>));
  return keys;
}

export const num = (value: string | number | null | undefined): number => Number(value);
export const str = (value: string | number | null | undefined): string => String(value ?? "");
export const date = (value: string | number | null | undefined): Date => new Date(Number(value));
/** An author kind as stored ("user", else "agent"). */
export const authorKindOf = (value: string | number | null | undefined): "agent" | "user" =>
  value === "user" ? "user" : "agent";
export const flag = (value: string | number | null | undefined): boolean => Number(value) !== 0;
export const isNull = (value: unknown): value is null | undefined => value === null || value === undefined;
export const numOrNull = (value: string | number | null | undefined): number | null =>
  isNull(value) ? null : Number(value);
export const strOrNull = (value: string | number | null | undefined): string | null =>
  isNull(value) ? null : String(value);
export const dateOrNull = (value: string | number | null | undefined): Date | null =>
  isNull(value) ? null : new Date(Number(value));

/**
 * The select list of `columns` of table alias `alias`, each named `prefix` + column, so that one
 * statement can read several tables' rows and each table's codec decodes its own (cellsOf).
 */
export function selectList(columns: readonly string[], alias: string, prefix: string): string {
  return columns.map((column) => `${alias}.${column} AS ${prefix}${column}`).join(", ");
}

/** `?, ?, ...`: one placeholder for each of `count` values. */
export function placeholders(count: number): string {
  return Array.from({ length: count }, () => "?").join(", ");
}

/** Which stored row a size check is about (StorageCorruptionError says so). */
export type RowOf = Pick<CorruptContent, "taskId" | "row">;

/**
 * Content is stored with its UTF-8 size; a mismatch means the row was truncated or altered outside
 * the service, and composing an append from it would silently lose text.
 */
export function verifyContent(content: string, recordedBytes: number, what: RowOf): void {
  verifySize(Buffer.byteLength(content, "utf8"), recordedBytes, what);
}

/** The stored size (measured by the reader or the database) against the recorded one. */
export function verifySize(storedBytes: number, recordedBytes: number, what: RowOf): void {
  if (storedBytes !== recordedBytes)
    throw new StorageCorruptionError({ ...what, recordedBytes, storedBytes });
}

/** The row's `content` cell (null when the read did not select it), checked against its recorded size. */
export function checkedContent(cell: Cell, recordedBytes: number, what: RowOf): string | null {
  const stored = cell("content");
  if (isNull(stored)) return null;
  const content = String(stored);
  verifyContent(content, recordedBytes, what);
  return content;
}

/**
 * A row's checklist progress (issue 56): its `checklist_checked` and `checklist_total`, trusted
 * only when they were counted at the row's current `versionColumn` (stamped in `stampColumn`);
 * null on a row written before they were counted, or rewritten by a replica of an earlier release,
 * which leaves them as they were.
 */
export function stampedChecklist(
  cell: Cell,
  stampColumn: string,
  versionColumn: string,
): { readonly checked: number; readonly total: number } | null {
  const checked = cell("checklist_checked");
  const total = cell("checklist_total");
  const at = cell(stampColumn);
  if (isNull(checked) || isNull(total) || isNull(at) || num(at) !== num(cell(versionColumn))) return null;
  return { checked: num(checked), total: num(total) };
}
