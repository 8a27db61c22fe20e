import type { MigrationInterface, QueryRunner } from "typeorm";

// The checklist progress of each plan (issue 56), counted when its content is written: on HEAD the
// items ticked, the items, whether the content ends open (an unclosed fence or HTML block, which an
// appended fragment would continue) and the version they were counted at; on each revision the
// first two and the row version they were counted at. Nullable columns added at the end: additive,
// instant on MySQL 8 and MariaDB, and replicas of the previous release keep working while it rolls
// out: they never set them, and a row they write no longer has the version its figures were counted
// at, so that the figures are not trusted. NULL on rows written before: such a plan's progress is
// absent until its next write (or `migrate`'s count) counts it.
//
// FROZEN once shipped: imports nothing but TypeORM's types (issue 42, "Migrations frozen").
const columns: readonly (readonly [string, string])[] = [
  ["task_plans", "checklist_checked"],
  ["task_plans", "checklist_total"],
  ["task_plans", "checklist_open_end"],
  ["task_plans", "checklist_version"],
  ["task_plan_revisions", "checklist_checked"],
  ["task_plan_revisions", "checklist_total"],
  ["task_plan_revisions", "checklist_row_version"],
];

// A version is a BIGINT, as HEAD's; the counts and a revision's row version fit an INTEGER.
const TYPES: Readonly<Record<string, string>> = { checklist_version: "BIGINT" };

/** Checklist-progress columns of task_plans and task_plan_revisions, for both dialects. */
export class ChecklistProgress1765400000000 implements MigrationInterface {
  readonly name = "ChecklistProgress1765400000000";

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const [table, column] of columns)
      await queryRunner.query(`ALTER TABLE ${table} ADD COLUMN ${column} ${TYPES[column] ?? "INTEGER"} NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const [table, column] of [...columns].reverse())
      await queryRunner.query(`ALTER TABLE ${table} DROP COLUMN ${column}`);
  }
}
