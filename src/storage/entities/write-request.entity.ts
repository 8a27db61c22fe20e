import { Column, Entity, PrimaryColumn } from "typeorm";
import { bigintAsNumber } from "./column-types";

/** Row of `write_requests`: an agent write's request id, payload fingerprint and result. */
@Entity({ name: "write_requests" })
export class WriteRequestEntity {
  @PrimaryColumn({ name: "task_id", type: "varchar", length: 128 })
  taskId: string;

  @PrimaryColumn({ name: "request_id", type: "varchar", length: 128 })
  requestId: string;

  @Column({ type: "varchar", length: 64 })
  fingerprint: string;

  @Column({ type: "text" })
  result: string;

  @Column({ name: "created_at", type: "bigint", transformer: bigintAsNumber })
  createdAt: number;
}
