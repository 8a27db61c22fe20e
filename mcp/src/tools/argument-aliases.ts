/**
 * The argument names agents already use (issue 56, item 4), as a pure rule: an agent trained on the
 * common edit tools calls edit_task_plan with `old_string`/`new_string` (Claude Code's Edit tool),
 * `old_str`/`new_str` (the text-editor tool) or `oldString`/`newString`, and one used to camelCase
 * JSON writes `expectedVersion` or `taskId`. Each tool accepts these for its own (canonical) names;
 * its advertised schema shows only the canonical ones. The table is documented in docs/mcp.md
 * ("The argument names agents use"), which a unit test keeps in step with ALIAS_TABLE.
 *
 * Rules, for one call's arguments and the tool's canonical names:
 * - a canonical name is taken as it is; an alias is renamed to its canonical name;
 * - a name given more than once (the canonical name and an alias, or two aliases) with EQUAL values
 *   is taken once; with DIFFERENT values the call is refused naming both, and nothing runs;
 * - any other name is refused, naming the canonical names the tool accepts (and that aliases exist).
 */

/** Aliases beyond a name's camelCase form, by canonical name: the names of the common edit tools. */
export const EXTRA_ALIASES: Readonly<Record<string, readonly string[]>> = {
  old_text: ["old_string", "old_str", "oldString", "oldStr"],
  new_text: ["new_string", "new_str", "newString", "newStr"],
};

/** The camelCase form of a snake_case name ("expected_version" gives "expectedVersion"). */
export function camelCaseOf(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
}

/** Every alias of a canonical name: its camelCase form (when it differs), then its extra aliases. */
export function aliasesOf(canonical: string): readonly string[] {
  const camel = camelCaseOf(canonical);
  return [...(camel === canonical ? [] : [camel]), ...(EXTRA_ALIASES[canonical] ?? [])];
}

/** One row per canonical argument name of the tools, with its aliases (for docs/mcp.md and its test). */
export function aliasTable(canonicalNames: Iterable<string>): [string, readonly string[]][] {
  const names = [...new Set(canonicalNames)].sort();
  return names.map((name) => [name, aliasesOf(name)]);
}

/** The outcome of normalizing one call's arguments: the canonical arguments, or why they are refused. */
export type NormalizedArguments =
  | { readonly ok: true; readonly arguments: Record<string, unknown> }
  | {
      readonly ok: false;
      readonly reason: "CONFLICTING_ARGUMENTS" | "UNKNOWN_ARGUMENT";
      readonly message: string;
    };

/**
 * Renames the aliases among `given` to the tool's canonical names (`canonical`, in the tool's
 * order), refusing conflicting duplicates and unknown names (the rules above). Never throws and
 * never changes `given`.
 */
export function normalizeArguments(
  given: Readonly<Record<string, unknown>>,
  canonical: readonly string[],
): NormalizedArguments {
  const targetOf = new Map<string, string>();
  for (const name of canonical) for (const alias of aliasesOf(name)) targetOf.set(alias, name);
  for (const name of canonical) targetOf.set(name, name);

  const unknown = Object.keys(given).filter((key) => !targetOf.has(key));
  if (unknown.length > 0) {
    const names = unknown.map((key) => JSON.stringify(key)).join(", ");
    return {
      ok: false,
      reason: "UNKNOWN_ARGUMENT",
      message:
        `unknown argument${unknown.length > 1 ? "s" : ""} ${names}; the accepted arguments are ` +
        `${canonical.join(", ")} (aliases are accepted too: ${aliasNote(canonical)}; docs/mcp.md lists them)`,
    };
  }

  const result: Record<string, unknown> = {};
  const givenAs = new Map<string, string>();
  // Canonical names first, so that a conflict names the canonical one first.
  const keys = Object.keys(given).sort((a, b) => rank(a, targetOf) - rank(b, targetOf));
  for (const key of keys) {
    const target = targetOf.get(key) as string;
    const first = givenAs.get(target);
    if (first === undefined) {
      givenAs.set(target, key);
      result[target] = given[key];
    } else if (!sameValue(result[target], given[key])) {
      return {
        ok: false,
        reason: "CONFLICTING_ARGUMENTS",
        message:
          `${first} and ${key} name the same argument (${target}) but have different values; ` +
          `pass it once, as ${target}`,
      };
    }
  }
  return { ok: true, arguments: result };
}

// What the refusal of an unknown name says of the aliases: camelCase, and the tool's extra aliases.
function aliasNote(canonical: readonly string[]): string {
  const extras = canonical
    .filter((name) => EXTRA_ALIASES[name])
    .map((name) => `${(EXTRA_ALIASES[name] ?? []).join("/")} for ${name}`);
  return ["the camelCase form of each name (expected_version as expectedVersion)", ...extras].join(", ");
}

// 0 for a canonical name, 1 for an alias.
const rank = (key: string, targetOf: ReadonlyMap<string, string>) => (targetOf.get(key) === key ? 0 : 1);

// Arguments are JSON values: equal when their JSON forms are equal (undefined equals only itself).
function sameValue(a: unknown, b: unknown): boolean {
  return a === b || (a !== undefined && b !== undefined && JSON.stringify(a) === JSON.stringify(b));
}
