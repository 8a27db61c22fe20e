import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * The merge marker of task_plan_revisions (issue 44): a revision written by a merge of a stale
 * write records the version the write was based on (`merged_from_version`) and the newest version
 * it merged in (`merged_to_version`); both NULL on every other revision. Nullable columns added at
 * the end: additive, instant on MySQL 8 and MariaDB, and replicas of the previous release keep
 * working while it rolls out (they never set them).
 *
 * FROZEN once shipped: imports nothing but TypeORM's types (issue 42, "Migrations frozen").
 */
export class RevisionMergeMarker1765300000000 implements MigrationInterface {
  readonly name = "RevisionMergeMarker1765300000000";

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const column of ["merged_from_version", "merged_to_version"])
      await queryRunner.query(`ALTER TABLE task_plan_revisions ADD COLUMN ${column} BIGINT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const column of ["merged_to_version", "merged_from_version"])
      await queryRunner.query(`ALTER TABLE task_plan_revisions DROP COLUMN ${column}`);
  }
}
