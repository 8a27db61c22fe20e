import { isServiceError } from "@taskplans/client";
import { AuthorKind, type Plan, type WrittenRevision } from "@taskplans/contract";
import type { ModelAuthor, PlanModel, PlannedWrite, Rejection } from "./plan-model";
import { codePoints, utf8Bytes } from "./plan-text-rules";
import { type PlanApi, type RpcFailure, rpcError } from "../calls/rpc";

/**
 * The comparisons of the differential write-path test: a call's outcome against the model's
 * decision, a write's acknowledgement against the write the model planned, and the whole stored
 * state (GetPlan byte for byte, sizes, version, the revision list) after every step. A difference
 * throws a `Divergence` naming the step, so fast-check shrinks the sequence that produced it.
 */

/** The system under test: one fresh task, and the revision_version tokens seen so far. */
export interface Sut {
  readonly plans: PlanApi;
  readonly taskId: string;
  /** revision number -> the revision's row changes (model) -> the token the product answered. */
  readonly tokens: Map<number, Map<number, string>>;
}

/** With PROPERTY_TRACE set, every step and its outcome go to stderr (for replaying a failure). */
export function trace(line: string): void {
  if (process.env.PROPERTY_TRACE) process.stderr.write(`${line}\n`);
}

export class Divergence extends Error {
  override readonly name = "Divergence";
}

/** `text` with everything but printable ASCII escaped, long texts shortened around the middle. */
export function show(text: string): string {
  const escape = (s: string) =>
    [...s]
      .map((c) => (/^[\x20-\x7e]$/.test(c) && c !== "\\" ? c : `\\u{${c.codePointAt(0)?.toString(16)}}`))
      .join("");
  const chars = [...text];
  if (chars.length <= 120) return `"${escape(text)}"`;
  return `"${escape(chars.slice(0, 40).join(""))}..."(${chars.length} code points, ${utf8Bytes(text)} bytes)"...${escape(chars.slice(-40).join(""))}"`;
}

/** Where two texts first differ, for a readable failure. */
function firstDifference(expected: string, actual: string): string {
  let i = 0;
  while (i < expected.length && expected[i] === actual[i]) i++;
  const around = (s: string) => show(s.slice(Math.max(0, i - 20), i + 20));
  return `first difference at UTF-16 index ${i}: expected ${around(expected)}, got ${around(actual)}`;
}

export function expectEqual(step: string, what: string, expected: unknown, actual: unknown): void {
  if (typeof expected === "string" && typeof actual === "string") {
    if (expected === actual && Buffer.from(expected).equals(Buffer.from(actual))) return;
    throw new Divergence(`${step}: ${what} differs: ${firstDifference(expected, actual)}`);
  }
  if (JSON.stringify(expected) === JSON.stringify(actual)) return;
  throw new Divergence(
    `${step}: ${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`,
  );
}

export type Attempt<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly failure: RpcFailure };

/** Runs a call; a gRPC error becomes its decoded failure, anything else is rethrown. */
export async function attempt<T>(call: Promise<T>): Promise<Attempt<T>> {
  try {
    return { ok: true, value: await call };
  } catch (error) {
    if (!isServiceError(error)) throw error;
    return { ok: false, failure: await rpcError(Promise.reject(error)) };
  }
}

const failureText = (f: RpcFailure) => `${f.code} ${f.reason} ${JSON.stringify(f.metadata)} "${f.message}"`;

/** The product rejected exactly when the model did, with an accepted reason and its metadata. */
export function expectOutcome<T>(
  step: string,
  decision: Rejection | { readonly ok: true },
  result: Attempt<T>,
): void {
  trace(`  -> ${result.ok ? "ok" : result.failure.reason}`);
  if (decision.ok && !result.ok) {
    throw new Divergence(
      `${step}: the model accepts this write, the product failed: ${failureText(result.failure)}`,
    );
  }
  if (!decision.ok && result.ok) {
    const reasons = decision.accepted.map((f) => f.reason).join(" or ");
    throw new Divergence(`${step}: the model rejects this (${reasons}), the product accepted it`);
  }
  if (decision.ok || result.ok) return;
  const match = decision.accepted.find((f) => f.reason === result.failure.reason);
  if (!match) {
    const reasons = decision.accepted.map((f) => f.reason).join(" or ");
    throw new Divergence(`${step}: expected ${reasons}, got ${failureText(result.failure)}`);
  }
  for (const [key, value] of Object.entries(match.metadata ?? {})) {
    expectEqual(step, `${match.reason} metadata ${key}`, value, result.failure.metadata[key]);
  }
}

export const wireKind = (author: ModelAuthor) =>
  author.kind === "agent" ? AuthorKind.AUTHOR_KIND_AGENT : AuthorKind.AUTHOR_KIND_USER;

/** A write's acknowledgement, checked after `model.commit`: the plan without content, the revision. */
export function expectWritten(
  step: string,
  model: PlanModel,
  planned: PlannedWrite,
  response: { plan?: Plan | undefined; revision?: WrittenRevision | undefined },
  knownIds: ReadonlySet<string>,
): void {
  const head = model.head;
  if (!head || !planned.revision) throw new Error(`${step}: not a content write`);
  const plan = response.plan;
  expectEqual(
    step,
    "acknowledged plan",
    [
      model.version,
      head.title,
      "",
      utf8Bytes(head.content),
      codePoints(head.content),
      model.latest()?.number,
    ],
    [
      plan?.version,
      plan?.title,
      plan?.content,
      plan?.contentBytes,
      plan?.contentChars,
      plan?.latestRevisionNumber,
    ],
  );
  const revision = response.revision;
  expectEqual(
    step,
    "written revision (number, coalesced)",
    [planned.revision.number, planned.revision.coalesced],
    [revision?.number, revision?.coalesced],
  );
  const id = revision?.id ?? "";
  if (planned.revision.coalesced) expectEqual(step, "coalesced revision id", model.latest()?.id, id);
  else if (id === "" || knownIds.has(id)) throw new Divergence(`${step}: a new revision reused id "${id}"`);
}

/** GetPlan: content byte for byte, title, version, sizes, newest revision; PLAN_NOT_FOUND when deleted. */
async function expectHead(step: string, model: PlanModel, sut: Sut): Promise<void> {
  const read = await attempt(sut.plans.getPlan({ taskId: sut.taskId }));
  const head = model.head;
  if (!head) {
    if (read.ok)
      throw new Divergence(`${step}: GetPlan answered a plan, the model has none (deleted or never created)`);
    expectEqual(step, "GetPlan without a plan", "PLAN_NOT_FOUND", read.failure.reason);
    return;
  }
  if (!read.ok) throw new Divergence(`${step}: GetPlan failed: ${failureText(read.failure)}`);
  const { plan, totalBytes, totalChars, hasMore } = read.value;
  expectEqual(step, "GetPlan content", head.content, plan?.content ?? "");
  const bytes = utf8Bytes(head.content);
  const chars = codePoints(head.content);
  expectEqual(
    step,
    "GetPlan [title, version, content_bytes, content_chars, total_bytes, total_chars, has_more, latest_revision_number, created_by]",
    [head.title, model.version, bytes, chars, bytes, chars, false, model.latest()?.number, head.createdBy],
    [
      plan?.title,
      plan?.version,
      plan?.contentBytes,
      plan?.contentChars,
      totalBytes,
      totalChars,
      hasMore,
      plan?.latestRevisionNumber,
      plan?.createdBy,
    ],
  );
}

/** Remembers a revision_version token: one token per row state, a new one whenever the row changed. */
export function recordToken(step: string, model: PlanModel, sut: Sut, number: number, token: string): void {
  const rowChanges = model.revision(number)?.rowChanges ?? -1;
  const seen = sut.tokens.get(number) ?? new Map<number, string>();
  sut.tokens.set(number, seen);
  const known = seen.get(rowChanges);
  if (known !== undefined)
    return expectEqual(step, `revision_version of revision ${number} (unchanged row)`, known, token);
  if ([...seen.values()].includes(token)) {
    throw new Divergence(
      `${step}: revision ${number} changed (coalesced into) but kept its revision_version`,
    );
  }
  seen.set(rowChanges, token);
}

/** ListPlanRevisions: every revision's metadata, newest first, paged through. */
async function expectRevisions(step: string, model: PlanModel, sut: Sut): Promise<void> {
  const listed = [];
  let pageToken = "";
  do {
    const page = await attempt(sut.plans.listPlanRevisions({ taskId: sut.taskId, pageSize: 100, pageToken }));
    if (!page.ok) throw new Divergence(`${step}: ListPlanRevisions failed: ${failureText(page.failure)}`);
    listed.push(...page.value.revisions);
    pageToken = page.value.nextPageToken;
  } while (pageToken !== "");
  expectEqual(step, "revision count", model.revisions.length, listed.length);
  const expected = [...model.revisions]
    .reverse()
    .map((r) => [
      r.number,
      r.id,
      r.title,
      wireKind(r.author),
      r.author.name,
      r.revertOf === null ? null : (model.revision(r.revertOf)?.id ?? "?"),
      utf8Bytes(r.content),
      codePoints(r.content),
    ]);
  const actual = listed.map((r) => [
    r.revisionNumber,
    r.id,
    r.title,
    r.authorKind,
    r.authorName,
    r.revertOfRevisionId ?? null,
    r.contentBytes,
    r.contentChars,
  ]);
  expectEqual(
    step,
    "revisions [number, id, title, author kind, author name, revert of, bytes, chars]",
    expected,
    actual,
  );
  for (const r of listed) recordToken(step, model, sut, r.revisionNumber, r.revisionVersion);
}

/** Everything a step must leave as the model says (rejections included: nothing changed). */
export async function expectState(step: string, model: PlanModel, sut: Sut): Promise<void> {
  await expectHead(step, model, sut);
  await expectRevisions(step, model, sut);
}
