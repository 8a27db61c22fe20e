import { Column, Entity, PrimaryColumn } from "typeorm";
import { bigintAsNumber } from "./column-types";

/** Row of `task_plan_revisions`; UNIQUE(task_id, revision_number). */
@Entity({ name: "task_plan_revisions" })
export class RevisionEntity {
  // The entity's identity; on MySQL the table's primary key is (task_id, revision_number), and `id`
  // a unique key (migration RevisionLocality1765200000000: one task's rows stored together).
  @PrimaryColumn({ type: "varchar", length: 36 })
  id: string;

  @Column({ name: "task_id", type: "varchar", length: 128 })
  taskId: string;

  @Column({ name: "revision_number", type: "integer" })
  revisionNumber: number;

  @Column({ type: "varchar", length: 1000 })
  title: string;

  @Column({ type: "text" })
  content: string;

  @Column({ name: "content_bytes", type: "integer" })
  contentBytes: number;

  @Column({ name: "content_chars", type: "integer" })
  contentChars: number;

  @Column({ name: "author_kind", type: "varchar", length: 16 })
  authorKind: string;

  @Column({ name: "author_name", type: "varchar", length: 1000 })
  authorName: string;

  @Column({ name: "revert_of_revision_id", type: "varchar", length: 36, nullable: true })
  revertOfRevisionId: string | null;

  @Column({ name: "created_at", type: "bigint", transformer: bigintAsNumber })
  createdAt: number;

  @Column({ name: "updated_at", type: "bigint", transformer: bigintAsNumber })
  updatedAt: number;

  @Column({ name: "row_version", type: "integer" })
  rowVersion: number;
}
