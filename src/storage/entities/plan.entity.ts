import { Column, Entity, PrimaryColumn } from "typeorm";
import { bigintAsNumber, intAsBoolean } from "./column-types";

/** Row of `task_plans`: the HEAD of a task's plan (a tombstone once deleted). */
@Entity({ name: "task_plans" })
export class PlanEntity {
  @PrimaryColumn({ name: "task_id", type: "varchar", length: 128 })
  taskId: string;

  @Column({ type: "varchar", length: 1000 })
  title: string;

  @Column({ type: "text" })
  content: string;

  @Column({ name: "content_bytes", type: "integer" })
  contentBytes: number;

  @Column({ name: "content_chars", type: "integer" })
  contentChars: number;

  /** Code points of the content without its trailing whitespace (null: written before it was recorded). */
  @Column({ name: "content_trimmed_chars", type: "integer", nullable: true })
  trimmedChars: number | null;

  /** UTF-8 bytes of the content without its trailing whitespace. */
  @Column({ name: "content_trimmed_bytes", type: "integer", nullable: true })
  trimmedBytes: number | null;

  @Column({ type: "bigint", transformer: bigintAsNumber })
  version: number;

  @Column({ name: "created_by", type: "varchar", length: 16 })
  createdBy: string;

  @Column({ name: "created_at", type: "bigint", transformer: bigintAsNumber })
  createdAt: number;

  @Column({ name: "updated_at", type: "bigint", transformer: bigintAsNumber })
  updatedAt: number;

  @Column({ name: "latest_revision_number", type: "integer" })
  latestRevisionNumber: number;

  @Column({ type: "integer", transformer: intAsBoolean })
  deleted: boolean;

  @Column({ name: "implementation_started_at", type: "bigint", nullable: true, transformer: bigintAsNumber })
  implementationStartedAt: number | null;

  @Column({ name: "implementation_started_by", type: "varchar", length: 1000, nullable: true })
  implementationStartedBy: string | null;

  @Column({ name: "implementation_started_session_id", type: "varchar", length: 128, nullable: true })
  implementationStartedSessionId: string | null;

  /**
   * The task's history usage (revisions, and bytes of every stored copy of plan text), kept by every
   * write in its transaction; trusted only while `historyVersion` is HEAD's version (null: not kept).
   */
  @Column({ name: "history_revisions", type: "integer", nullable: true })
  historyRevisions?: number | null;

  @Column({ name: "history_bytes", type: "bigint", nullable: true, transformer: bigintAsNumber })
  historyBytes?: number | null;

  @Column({ name: "history_version", type: "bigint", nullable: true, transformer: bigintAsNumber })
  historyVersion?: number | null;
}
