import type fc from "fast-check";
import { WriteMode } from "@taskplans/contract";
import type { WritePlanResponse } from "@taskplans/contract";
import type { SizedText } from "./hostile-text";
import {
  type Sut,
  attempt,
  expectEqual,
  expectOutcome,
  expectState,
  expectWritten,
  show,
} from "./plan-checks";
import type { Decision, PlanModel } from "./plan-model";
import {
  type AuthorChoice,
  type VersionChoice,
  pick,
  resolveSized,
  resolveVersion,
  showSized,
} from "./plan-step-choices";
import { codePoints, utf8Bytes, withoutTrailingWhiteSpace } from "./plan-text-rules";

/**
 * The write steps of the differential test (fast-check commands). Each decides with the model
 * before calling, compares the outcome and the acknowledgement, commits to the model, and then
 * compares the whole stored state, so a rejection that changed anything is caught at once.
 */
export abstract class Step implements fc.AsyncCommand<PlanModel, Sut> {
  check(): boolean {
    return true;
  }
  abstract run(model: PlanModel, sut: Sut): Promise<void>;
  abstract toString(): string;
}
/** Calls a write, compares it with the model's decision, commits, then checks the stored state. */
export async function runWrite(
  step: string,
  model: PlanModel,
  sut: Sut,
  decision: Decision,
  call: Promise<WritePlanResponse>,
): Promise<void> {
  const result = await attempt(call);
  expectOutcome(step, decision, result);
  if (decision.ok && result.ok) {
    const knownIds = new Set(model.revisions.map((r) => r.id));
    model.commit(decision, result.value.revision?.id ?? "");
    expectWritten(step, model, decision, result.value, knownIds);
    const truncation = result.value.truncation;
    expectEqual(
      step,
      "truncation",
      decision.truncation ?? null,
      truncation
        ? {
            priorChars: truncation.priorChars,
            newChars: truncation.newChars,
            priorRevisionNumber: truncation.priorRevisionNumber,
          }
        : null,
    );
  }
  await expectState(step, model, sut);
}

export type ContentOp = "create" | "replace" | "append" | "save";

/** CreatePlan, UpdatePlan (replace or append) and SavePlan with generated content. */
export class ContentStep extends Step {
  constructor(
    readonly op: ContentOp,
    readonly text: SizedText,
    readonly title: string | undefined,
    readonly author: AuthorChoice,
    readonly version: VersionChoice,
    readonly acknowledge: boolean,
    readonly unspecifiedMode: boolean,
  ) {
    super();
  }

  async run(model: PlanModel, sut: Sut): Promise<void> {
    const stored = model.head?.content ?? "";
    const kept = this.op === "append" ? withoutTrailingWhiteSpace(stored) : "";
    const separator = kept === "" ? 0 : 2;
    const content = resolveSized(this.text, {
      prefixBytes: utf8Bytes(kept) + separator,
      prefixChars: codePoints(kept) + separator,
      priorChars: codePoints(stored),
    });
    const expectedVersion = this.op === "save" ? undefined : resolveVersion(this.version, model);
    const ack = this.op !== "save" && this.acknowledge;
    const request = {
      content,
      title: this.title,
      author: this.author.model,
      expectedVersion,
      acknowledgeReduction: ack,
    };
    const wire = {
      taskId: sut.taskId,
      content,
      title: this.title,
      author: this.author.wire,
      expectedVersion,
      acknowledgeReduction: ack,
    };
    const plans = sut.plans;
    const [decision, call] =
      this.op === "create"
        ? [model.create(request), plans.createPlan(wire)]
        : this.op === "replace"
          ? [
              model.replace(request),
              plans.updatePlan({
                ...wire,
                mode: this.unspecifiedMode ? WriteMode.WRITE_MODE_UNSPECIFIED : WriteMode.WRITE_MODE_REPLACE,
              }),
            ]
          : this.op === "append"
            ? [model.append(request), plans.updatePlan({ ...wire, mode: WriteMode.WRITE_MODE_APPEND })]
            : [
                model.save(request),
                plans.savePlan({ taskId: sut.taskId, content, title: this.title, author: this.author.wire }),
              ];
    await runWrite(this.toString(), model, sut, decision, call);
  }

  toString(): string {
    const options = [
      this.title === undefined ? "" : `title=${show(this.title)}`,
      `author=${this.author.label}`,
      this.op === "save" ? "" : `version=${this.version}`,
      this.op !== "save" && this.acknowledge ? "acknowledge_reduction" : "",
      this.op === "replace" && this.unspecifiedMode ? "mode=UNSPECIFIED" : "",
    ];
    return `${this.op}(${[showSized(this.text), ...options].filter((o) => o !== "").join(", ")})`;
  }
}

/** Which text EditPlan replaces: a slice of the current plan (in code points), any text, or all of it. */
export type OldText =
  | { readonly kind: "slice"; readonly at: number; readonly length: number }
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "whole" };

export class EditStep extends Step {
  constructor(
    readonly oldText: OldText,
    readonly newText: SizedText,
    readonly author: AuthorChoice,
    readonly version: VersionChoice,
    readonly acknowledge: boolean,
  ) {
    super();
  }

  async run(model: PlanModel, sut: Sut): Promise<void> {
    const content = model.head?.content ?? "";
    const chars = [...content];
    const start = this.oldText.kind === "slice" ? pick(this.oldText.at, chars.length) : null;
    const oldText =
      this.oldText.kind === "text"
        ? this.oldText.text
        : this.oldText.kind === "whole"
          ? content
          : start === null
            ? ""
            : chars.slice(start, start + (this.oldText as { length: number }).length).join("");
    const newText = resolveSized(this.newText, {
      prefixBytes: utf8Bytes(content) - utf8Bytes(oldText),
      prefixChars: chars.length - codePoints(oldText),
      priorChars: chars.length,
    });
    const expectedVersion = resolveVersion(this.version, model);
    const decision = model.edit({
      oldText,
      newText,
      author: this.author.model,
      expectedVersion,
      acknowledgeReduction: this.acknowledge,
    });
    const call = sut.plans.editPlan({
      taskId: sut.taskId,
      oldText,
      newText,
      author: this.author.wire,
      expectedVersion,
      acknowledgeReduction: this.acknowledge,
    });
    await runWrite(`${this.toString()} [old_text ${show(oldText)}]`, model, sut, decision, call);
  }

  toString(): string {
    const old =
      this.oldText.kind === "text"
        ? show(this.oldText.text)
        : this.oldText.kind === "whole"
          ? "<whole plan>"
          : `<slice at ${this.oldText.at}, ${this.oldText.length} chars>`;
    return `edit(${old} -> ${showSized(this.newText)}, author=${this.author.label}, version=${this.version}${this.acknowledge ? ", acknowledge_reduction" : ""})`;
  }
}

export class DeleteStep extends Step {
  constructor(readonly version: VersionChoice) {
    super();
  }

  async run(model: PlanModel, sut: Sut): Promise<void> {
    const expectedVersion = resolveVersion(this.version, model);
    const decision = model.delete({ expectedVersion });
    const result = await attempt(sut.plans.deletePlan({ taskId: sut.taskId, expectedVersion }));
    expectOutcome(this.toString(), decision, result);
    if (decision.ok && result.ok) model.commit(decision, "");
    await expectState(this.toString(), model, sut);
  }

  toString(): string {
    return `delete(version=${this.version})`;
  }
}
