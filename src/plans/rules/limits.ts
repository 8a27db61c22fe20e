/** Constants of the plan rules (kandev values; DESIGN.md "Semantics we fix"). */
export const limits = Object.freeze({
  /** Largest content a write may store, in UTF-8 bytes; exactly this size is accepted. */
  maxPlanBytes: 262_144,
  /** The reduction guard only judges replacements of content at least this long (code points). */
  reductionMinPriorChars: 2_000,
  /** Title used when a new plan is written without one. */
  defaultTitle: "Plan",
  /** Longest title, in code points. */
  maxTitleChars: 1_000,
  /** Longest author or actor display name, in code points. */
  maxAuthorNameChars: 200,
  /** Longest task, workspace, session or revision id, in UTF-16 units (all ids are ASCII). */
  maxIdLength: 128,
  /** Revision page size when the request says 0 (AIP-158). */
  defaultPageSize: 20,
  /** Larger page sizes are treated as this (AIP-158). */
  maxPageSize: 100,
  /** Most code points one partial GetPlan returns. */
  maxReadChars: 65_536,
});
