import type { HeadRecord, RevisionRecord } from "../../src/plans/ports/records";

/** The instant fixtures are stamped with, unless they say otherwise. */
export const FIXTURE_AT = new Date("2026-11-29T12:00:00.000Z");

const sizes = (content: string) => ({
  contentBytes: Buffer.byteLength(content, "utf8"),
  contentChars: [...content].length,
});

/** A live HEAD row holding `content` (its sizes measured), version 1, revision 1; any field overridable. */
export function headRecord(content: string, overrides: Partial<HeadRecord> = {}): HeadRecord {
  return {
    taskId: "t",
    title: "Plan",
    content,
    ...sizes(content),
    version: 1,
    createdBy: "agent",
    createdAt: FIXTURE_AT,
    updatedAt: FIXTURE_AT,
    latestRevisionNumber: 1,
    deleted: false,
    implementationStartedAt: null,
    implementationStartedBy: null,
    implementationStartedSessionId: null,
    ...overrides,
  };
}

/** Revision 1 holding `content` (its sizes measured), by an agent; any field overridable. */
export function revisionRecord(content: string, overrides: Partial<RevisionRecord> = {}): RevisionRecord {
  return {
    id: "r1",
    taskId: "t",
    number: 1,
    title: "Plan",
    content,
    ...sizes(content),
    authorKind: "agent",
    authorName: "Agent",
    revertOfRevisionId: null,
    createdAt: FIXTURE_AT,
    updatedAt: FIXTURE_AT,
    rowVersion: 1,
    ...overrides,
  };
}
