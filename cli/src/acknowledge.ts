import type { WritePlanResponse } from "@taskplans/client";
import type { Output } from "./output";
import { checklistWords } from "./checklist-text";
import { writeJson } from "./shapes";

/**
 * A write's one acknowledgement line: task, version, size, revision; never the plan (like the MCP
 * tools, so an agent in a shell does not read its own plan back into its context). When the answer
 * carries the plan's checklist progress and the plan has a checklist, the line ends with it
 * ("checklist 2 of 3 done"); a plan without one adds nothing.
 */
export function acknowledge(out: Output, response: WritePlanResponse): void {
  const ack = writeJson(response);
  if (out.json) return out.document(ack);
  const revision = ack.revision
    ? ` revision ${ack.revision.number}${ack.revision.coalesced ? " (coalesced)" : ""}`
    : "";
  const merged = ack.merge
    ? ` merged with versions ${ack.merge.from_version + 1}..${ack.merge.to_version} (${ack.merge.method === "edit" ? "edit re-applied" : "lines merged"})`
    : "";
  const progress = ack.checklist?.total ? ` checklist ${checklistWords(ack.checklist)}` : "";
  out.line(`${ack.task_id} version ${ack.version} ${ack.content_bytes} bytes${revision}${merged}${progress}`);
}
