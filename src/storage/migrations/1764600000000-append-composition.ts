import type { MigrationInterface, QueryRunner } from "typeorm";

// The length of each plan's content without its trailing whitespace, in code points and UTF-8
// bytes, recorded at every content write: an append then composes in the database (keep that prefix,
// add the separator and the fragment) without reading the plan. NULL on rows written before this
// migration; an append to such a row reads the content once and records it.
const statements = [
  "ALTER TABLE task_plans ADD COLUMN content_trimmed_chars INTEGER NULL",
  "ALTER TABLE task_plans ADD COLUMN content_trimmed_bytes INTEGER NULL",
];

/** Trimmed-length columns of task_plans, for both dialects. */
export class AppendComposition1764600000000 implements MigrationInterface {
  name = "AppendComposition1764600000000";

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of statements) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query("ALTER TABLE task_plans DROP COLUMN content_trimmed_bytes");
    await queryRunner.query("ALTER TABLE task_plans DROP COLUMN content_trimmed_chars");
  }
}
