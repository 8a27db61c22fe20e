import fc from "fast-check";
import { type Author, AuthorKind } from "@taskplans/contract";
import type { SizedText } from "./hostile-text";
import type { ModelAuthor, PlanModel } from "./plan-model";
import { show } from "./plan-checks";
import { LIMIT_BYTES, codePoints, utf8Bytes } from "./plan-text-rules";

/**
 * The choices a generated step makes that only become values when it runs against the model's
 * state (which version to send, which revision to pick, how long a sized text must be), so a
 * shrunk sequence still means the same thing after earlier steps were removed.
 */

/** expected_version to send: the current one, none, an older one, or one that does not exist yet. */
export type VersionChoice = "current" | "absent" | "stale" | "ahead";

export function versionChoice(weights: Readonly<Record<VersionChoice, number>>): fc.Arbitrary<VersionChoice> {
  return fc.oneof(
    ...(Object.entries(weights) as [VersionChoice, number][])
      .filter(([, weight]) => weight > 0)
      .map(([choice, weight]) => ({ weight, arbitrary: fc.constant(choice) })),
  );
}

export function resolveVersion(choice: VersionChoice, model: PlanModel): number | undefined {
  if (choice === "absent") return undefined;
  if (choice === "current") return model.version;
  if (choice === "ahead") return model.version + 1;
  return Math.max(0, model.version - 1);
}

/** An author as sent on the wire and as the docs say the server must record it. */
export interface AuthorChoice {
  readonly wire: Author | undefined;
  readonly model: ModelAuthor;
  readonly label: string;
}

const author = (label: string, wire: Author | undefined, model: ModelAuthor): AuthorChoice => ({
  label,
  wire,
  model,
});

/** Agent path: an absent author or kind means an agent named "Agent" (proto Author, AuthorKind). */
export const AGENT_AUTHORS: readonly AuthorChoice[] = [
  author("default", undefined, { kind: "agent", name: "Agent" }),
  author("agent:Agent", { kind: AuthorKind.AUTHOR_KIND_AGENT, name: "" }, { kind: "agent", name: "Agent" }),
  author(
    "agent:Bot",
    { kind: AuthorKind.AUTHOR_KIND_AGENT, name: "Bot 🤖" },
    { kind: "agent", name: "Bot 🤖" },
  ),
  author(
    "unspecified:שרה",
    { kind: AuthorKind.AUTHOR_KIND_UNSPECIFIED, name: "שרה" },
    { kind: "agent", name: "שרה" },
  ),
];

/** Editor path: an absent author or kind means a user named "User"; an agent kind is kept. */
export const EDITOR_AUTHORS: readonly AuthorChoice[] = [
  author("default", undefined, { kind: "user", name: "User" }),
  author(
    "user:Ann",
    { kind: AuthorKind.AUTHOR_KIND_UNSPECIFIED, name: "Ann" },
    { kind: "user", name: "Ann" },
  ),
  author("user:User", { kind: AuthorKind.AUTHOR_KIND_USER, name: "User" }, { kind: "user", name: "User" }),
  author(
    "agent:Agent",
    { kind: AuthorKind.AUTHOR_KIND_AGENT, name: "Agent" },
    { kind: "agent", name: "Agent" },
  ),
];

export const agentAuthor = fc.constantFrom(...AGENT_AUTHORS);
export const editorAuthor = fc.constantFrom(...EDITOR_AUTHORS);

/** Titles: single lines without controls, but with RTL, astral, zero-width and BOM characters. */
export const TITLES: readonly string[] = [
  "Plan",
  "Launch ✓",
  "\u202eRTL מבחן",
  "😀 e\u0301",
  "\ufeffBOM\u200b",
  "\uffff",
];
export const titleChoice = fc.option(fc.constantFrom(...TITLES), { freq: 4, nil: undefined });

/** What the resulting document already holds besides the sized text, and the plan's current length. */
export interface SizeContext {
  readonly prefixBytes: number;
  readonly prefixChars: number;
  readonly priorChars: number;
}

/** The text to send so that the resulting document has the size `spec` asks for. */
export function resolveSized(spec: SizedText, context: SizeContext): string {
  if (spec.kind === "text") return spec.text;
  if (spec.kind === "bytes") {
    const need = LIMIT_BYTES + spec.delta - context.prefixBytes - utf8Bytes(spec.tail);
    if (need <= 0) return spec.tail;
    const width = utf8Bytes(spec.fill);
    return spec.fill.repeat(Math.floor(need / width)) + "x".repeat(need % width) + spec.tail;
  }
  const count = spec.kind === "chars" ? spec.count : Math.floor(context.priorChars / 2) + spec.delta;
  const need = count - context.prefixChars - codePoints(spec.tail);
  return need <= 0 ? spec.tail : spec.fill.repeat(need) + spec.tail;
}

export function showSized(spec: SizedText): string {
  if (spec.kind === "text") return show(spec.text);
  const size =
    spec.kind === "bytes"
      ? `limit${spec.delta >= 0 ? "+" : ""}${spec.delta} bytes`
      : spec.kind === "chars"
        ? `${spec.count} chars`
        : `half${spec.delta >= 0 ? "+" : ""}${spec.delta} chars`;
  return `<${size} of ${show(spec.fill)} then ${show(spec.tail)}>`;
}

/** Picks one of `count` items by a generated natural number (null when there is none). */
export function pick(at: number, count: number): number | null {
  return count === 0 ? null : at % count;
}
