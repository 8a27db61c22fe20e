import { Column, Entity, PrimaryColumn } from "typeorm";
import { bigintAsNumber } from "./column-types";

/** Row of `tasks`. Schema: migrations/ (entities never synchronize). */
@Entity({ name: "tasks" })
export class TaskEntity {
  @PrimaryColumn({ type: "varchar", length: 128 })
  id: string;

  @Column({ name: "workspace_id", type: "varchar", length: 128 })
  workspaceId: string;

  @Column({ type: "varchar", length: 1000 })
  title: string;

  @Column({ name: "created_at", type: "bigint", transformer: bigintAsNumber })
  createdAt: number;
}
