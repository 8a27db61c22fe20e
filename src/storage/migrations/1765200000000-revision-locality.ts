import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * On MySQL/MariaDB, stores one task's revisions together: InnoDB clusters rows by primary key, and
 * with the random UUID id as that key a task's revisions were spread over the whole table (a page of
 * ListPlanRevisions read a page of the table per row once the table outgrew the buffer pool). The
 * primary key becomes (task_id, revision_number), the former unique key, and `id` keeps a unique key
 * of its own (a revision id is still unique across tasks, and found by it).
 *
 * InnoDB rebuilds the table in place with concurrent reads and writes allowed (ALGORITHM=INPLACE,
 * LOCK=NONE: it refuses rather than lock the table), taking its metadata lock only briefly at the
 * start and the end; replicas of the previous release keep working meanwhile, as nothing they
 * read or write changes. The rebuild copies the table once, so on a large table it takes a while.
 *
 * SQLite (the embedded default) is left as it is: its rows are found through the same
 * (task_id, revision_number) index, and changing a table's key there means copying the table under
 * the database's single write lock.
 */
export class RevisionLocality1765200000000 implements MigrationInterface {
  readonly name = "RevisionLocality1765200000000";
  // DDL commits on its own in MySQL; a transaction around it would only hide that.
  readonly transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.options.type !== "mysql") return;
    await queryRunner.query(
      "ALTER TABLE task_plan_revisions DROP PRIMARY KEY, ADD PRIMARY KEY (task_id, revision_number)," +
        " ADD UNIQUE KEY uq_revisions_id (id), DROP INDEX uq_revisions_task_number, ALGORITHM=INPLACE, LOCK=NONE",
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.options.type !== "mysql") return;
    await queryRunner.query(
      "ALTER TABLE task_plan_revisions DROP PRIMARY KEY, ADD PRIMARY KEY (id)," +
        " ADD UNIQUE KEY uq_revisions_task_number (task_id, revision_number), DROP INDEX uq_revisions_id," +
        " ALGORITHM=INPLACE, LOCK=NONE",
    );
  }
}
