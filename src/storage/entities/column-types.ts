import type { ValueTransformer } from "typeorm";

/** BIGINT columns (versions, epoch-millisecond timestamps) as JS numbers: MySQL may return strings. */
export const bigintAsNumber: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | number | null) => (value === null ? null : Number(value)),
};

/** BOOLEAN columns: SQLite and MySQL both store 0/1. */
export const intAsBoolean: ValueTransformer = {
  to: (value: boolean | undefined) => (value === undefined ? undefined : value ? 1 : 0),
  from: (value: number | boolean | null) => value === true || value === 1,
};
