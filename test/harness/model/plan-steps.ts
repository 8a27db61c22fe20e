import fc from "fast-check";
import { edgedText, hostileText, planText, sizedText } from "./hostile-text";
import { ReadStep, RevisionStep, WatchStep } from "./plan-read-steps";
import { agentAuthor, editorAuthor, titleChoice, versionChoice } from "./plan-step-choices";
import { RestoreStep, RevertStep } from "./plan-recovery-steps";
import { ContentStep, DeleteStep, EditStep, type OldText, type Step } from "./plan-write-steps";

/**
 * The generated steps of one task's sequence for the differential write-path test, weighted so
 * that plans exist most of the time, appends and edits dominate (the paths with rules of their own),
 * and every step can also be rejected (stale or missing versions, unknown revisions, bad ranges).
 */

const rarely = fc.oneof(
  { weight: 4, arbitrary: fc.constant(false) },
  { weight: 1, arbitrary: fc.constant(true) },
);
const revisionPick = fc.option(fc.nat(), { freq: 12, nil: null });

const oldText: fc.Arbitrary<OldText> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("slice" as const),
      at: fc.nat(),
      length: fc.integer({ min: 1, max: 12 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("text" as const), text: hostileText(3) }) },
  { weight: 1, arbitrary: fc.constant({ kind: "whole" as const }) },
);

const create = fc
  .tuple(
    sizedText(),
    titleChoice,
    agentAuthor,
    versionChoice({ absent: 6, current: 3, stale: 1, ahead: 1 }),
    rarely,
  )
  .map(
    ([text, title, author, version, ack]) =>
      new ContentStep("create", text, title, author, version, ack, false),
  );
const replace = fc
  .tuple(
    sizedText(),
    titleChoice,
    agentAuthor,
    versionChoice({ current: 8, absent: 1, stale: 1, ahead: 1 }),
    rarely,
    fc.boolean(),
  )
  .map(
    ([text, title, author, version, ack, unspecified]) =>
      new ContentStep("replace", text, title, author, version, ack, unspecified),
  );
const append = fc
  .tuple(
    sizedText(fc.oneof(edgedText(), planText())),
    titleChoice,
    agentAuthor,
    versionChoice({ absent: 6, current: 2, stale: 1, ahead: 0 }),
    rarely,
  )
  .map(
    ([text, title, author, version, ack]) =>
      new ContentStep("append", text, title, author, version, ack, false),
  );
const save = fc
  .tuple(sizedText(), titleChoice, editorAuthor)
  .map(([text, title, author]) => new ContentStep("save", text, title, author, "absent", false, false));
const edit = fc
  .tuple(
    oldText,
    sizedText(hostileText(6)),
    agentAuthor,
    versionChoice({ current: 8, absent: 1, stale: 1, ahead: 0 }),
    rarely,
  )
  .map(([old, text, author, version, ack]) => new EditStep(old, text, author, version, ack));
const remove = versionChoice({ absent: 2, current: 2, stale: 1, ahead: 0 }).map(
  (version) => new DeleteStep(version),
);
const restore = fc
  .tuple(
    revisionPick,
    fc.boolean(),
    fc.constantFrom<"current" | "stale">("current", "current", "current", "stale"),
    agentAuthor,
  )
  .map(([at, stale, version, author]) => new RestoreStep(at, stale, version, author));
const revert = fc.tuple(revisionPick, editorAuthor).map(([at, author]) => new RevertStep(at, author));
const read = fc
  .tuple(
    fc.oneof(
      { weight: 4, arbitrary: fc.nat().map((at) => ({ kind: "at" as const, at })) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          { kind: "end" as const },
          { kind: "past" as const },
          { kind: "absent" as const },
        ),
      },
    ),
    fc.oneof(
      { weight: 5, arbitrary: fc.integer({ min: 1, max: 24 }) },
      { weight: 2, arbitrary: fc.constantFrom(undefined, 65_536) },
      { weight: 1, arbitrary: fc.constantFrom(0, 65_537) },
    ),
    versionChoice({ absent: 6, current: 2, stale: 1, ahead: 0 }),
  )
  .map(([offset, limit, version]) => new ReadStep(offset, limit, version));
const revision = revisionPick.map((at) => new RevisionStep(at));
const watch = fc.tuple(fc.nat(), rarely).map(([at, ahead]) => new WatchStep(at, ahead));

/** Every step kind, weighted. */
export const planStep: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: create },
  { weight: 3, arbitrary: save },
  { weight: 6, arbitrary: append },
  { weight: 3, arbitrary: replace },
  { weight: 4, arbitrary: edit },
  { weight: 2, arbitrary: restore },
  { weight: 2, arbitrary: revert },
  { weight: 1, arbitrary: remove },
  { weight: 2, arbitrary: read },
  { weight: 2, arbitrary: revision },
  { weight: 1, arbitrary: watch },
);

/**
 * How a sequence starts: mostly by creating the plan (agent or editor), so most steps have a plan to
 * act on; shrinking may drop it.
 */
export const firstStep: fc.Arbitrary<Step | undefined> = fc.option(
  fc.oneof(
    fc
      .tuple(sizedText(), titleChoice, agentAuthor)
      .map(([text, title, author]) => new ContentStep("create", text, title, author, "absent", false, false)),
    save,
  ),
  { freq: 8, nil: undefined },
);
