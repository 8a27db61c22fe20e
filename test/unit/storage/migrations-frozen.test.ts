import { readdirSync, readFileSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import ts from "typescript";

// A migration ships once and is replayed on every fresh install from then on, so it must never run
// code that can change after it ships: it may import TypeORM and files of its own directory (frozen
// migrations-only helpers), nothing else (issue 42, "Migrations frozen"; STYLE.md habit 15).
const MIGRATIONS = resolve(__dirname, "..", "..", "..", "src", "storage", "migrations");

/** Every module a file's text names: imports, re-exports, require(), import(), references. */
function importsOf(text: string): string[] {
  const info = ts.preProcessFile(text, true, true);
  return [...info.importedFiles, ...info.referencedFiles, ...info.typeReferenceDirectives].map(
    (reference) => reference.fileName,
  );
}

/** The imports of a file in `directory` that reach outside TypeORM and `directory` itself. */
function liveImports(directory: string, text: string): string[] {
  return importsOf(text).filter((name) => {
    if (name === "typeorm") return false;
    if (!name.startsWith(".")) return true;
    return !resolve(directory, name).startsWith(directory + sep);
  });
}

const files = readdirSync(MIGRATIONS)
  .filter((name) => name.endsWith(".ts"))
  .sort();

describe("migrations are frozen: they import nothing that can change after they ship", () => {
  it("finds the migrations and reads their imports", () => {
    expect(files.filter((name) => /^\d{13}-.+\.ts$/.test(name)).length).toBeGreaterThanOrEqual(9);
    // The parse sees the TypeORM import every migration has (directly or through its helper).
    const text = readFileSync(join(MIGRATIONS, "1764400000000-initial-schema.ts"), "utf8");
    expect(importsOf(text)).toContain("typeorm");
  });

  it.each(files)("%s imports only typeorm and files under src/storage/migrations/", (name) => {
    const text = readFileSync(join(MIGRATIONS, name), "utf8");
    expect(liveImports(MIGRATIONS, text)).toEqual([]);
  });

  it("flags every way of reaching live code", () => {
    const text = [
      'import type { MigrationInterface } from "typeorm";',
      'import { AddColumn } from "./add-column";',
      'import { historyCountSql } from "../change-writes";',
      'export { sqlDialect } from "../sql-dialect";',
      'import { randomUUID } from "node:crypto";',
      'import { DataSource } from "typeorm/data-source/DataSource";',
      'const late = require("../../plans/compose");',
      'void import("./nested/../../write-statements");',
    ].join("\n");
    expect(liveImports(MIGRATIONS, text)).toEqual([
      "../change-writes",
      "../sql-dialect",
      "node:crypto",
      "typeorm/data-source/DataSource",
      "../../plans/compose",
      "./nested/../../write-statements",
    ]);
  });
});
