// The conformance scenario (clients/conformance/README.md) through @taskplans/client. Prints the
// canonical transcript on stdout and reads the test's answers on stdin. Environment: TASKPLANS_TARGET,
// TASKPLANS_FAILOVER_TARGET, TASKPLANS_TASK_ID, TASKPLANS_TOKEN, TASKPLANS_EXPIRED_TOKEN,
// TASKPLANS_TLS_* (optional: CA, CERT, KEY, SERVER_NAME).
import { createHash } from "node:crypto";
import { createInterface } from "node:readline";
import {
  authorKindToJSON,
  createClient,
  type GetPlanChangesResponse,
  historyUnavailableOf,
  mergeConflictOf,
  type PlanDiff,
  type PlanWatch,
  taskPlansErrorOf,
  type PlanChange,
  mergeMethodToJSON,
  planChangeKindToJSON,
  type PlanRevision,
  RestoreStatus,
  restoreStatusToJSON,
  WriteMode,
  type WritePlanResponse,
} from "@taskplans/client";

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const target = env("TASKPLANS_TARGET");
const failoverTarget = env("TASKPLANS_FAILOVER_TARGET");
const task = env("TASKPLANS_TASK_ID");
const token = env("TASKPLANS_TOKEN");
const expiredToken = env("TASKPLANS_EXPIRED_TOKEN");
// TLS when TASKPLANS_TLS_CA is set (mTLS with TASKPLANS_TLS_CERT and TASKPLANS_TLS_KEY), else plaintext.
const optional = (name: string) => process.env[name] || undefined;
const tls = optional("TASKPLANS_TLS_CA")
  ? {
      caFile: optional("TASKPLANS_TLS_CA"),
      certFile: optional("TASKPLANS_TLS_CERT"),
      keyFile: optional("TASKPLANS_TLS_KEY"),
      serverName: optional("TASKPLANS_TLS_SERVER_NAME"),
    }
  : undefined;
const client = createClient(target, { token, tls, defaultTimeoutMs: 10_000 });
const { plans, tasks } = client;

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const normalize = (text: string): string => text.split(task).join("<task>").replace(UUID, "<uuid>");
const quote = (text: string): string =>
  `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
type Value = string | number | boolean;
const show = (value: Value): string => (typeof value === "string" ? quote(value) : String(value));
const fields = (pairs: [string, Value][]): string => pairs.map(([k, v]) => ` ${k}=${show(v)}`).join("");

async function step(name: string, call: () => Promise<[string, Value][]>): Promise<void> {
  let line: string;
  try {
    line = `${name}: OK${fields(await call())}`;
  } catch (thrown) {
    // Raw WatchPlan streams fail with grpc-js errors; every other call with a TaskPlansError.
    const error = taskPlansErrorOf(thrown);
    if (!error) throw thrown;
    const metadata = Object.entries(error.errorInfo?.metadata ?? {})
      .filter(([key]) => key !== "request_id")
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const violations = error.fieldViolations.map((v): [string, Value] => [
      `violation.${v.field}`,
      v.description,
    ]);
    // Without ErrorInfo the error is the client library's own (a deadline, say): its wording is per language.
    const message = error.reason ? ` | ${quote(error.details)}` : "";
    line = `${name}: ${error.codeName} ${error.reason || "-"}${fields([...metadata, ...violations])}${message}`;
  }
  console.log(normalize(line));
}

const revisionList = (revisions: PlanRevision[], nextPageToken: string): [string, Value][] => [
  ["count", revisions.length],
  ["numbers", revisions.map((v) => v.revisionNumber).join(",")],
  ["bytes", revisions.map((v) => v.contentBytes).join(",")],
  ["reverts", revisions.map((v) => (v.revertOfRevisionId ? "yes" : "no")).join(",")],
  ["next_page_token", nextPageToken],
];

const written = (r: WritePlanResponse): [string, Value][] => [
  ["version", r.plan?.version ?? 0],
  ["revision", r.revision?.number ?? 0],
  ["coalesced", r.revision?.coalesced ?? false],
  ["bytes", r.plan?.contentBytes ?? 0],
];

// Over 2,000 characters, so that the reduction guard judges a replacement of it.
const INITIAL_PLAN =
  "# Plan\n- step one\n- step two\n\n## Notes\n" +
  "- a note that keeps this plan long enough for the reduction guard\n".repeat(40);
const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

// Export and import (issue 46): the task listed, exported in one page, and an import refused to a
// token that is not an operator's (nothing written).
async function exportAndImport(): Promise<void> {
  await step("list_tasks", async () => {
    const r = await tasks.listTasks({ workspaceId: "ws-conformance", pageSize: 1000 });
    return [["listed", r.tasks.some((t) => t.taskId === task)]];
  });
  await step("export_task", async () => {
    const r = await tasks.exportTask({ taskId: task });
    return [
      ["revisions", r.revisions.length],
      ["revision_count", r.revisionCount],
      ["more", r.more],
      ["version", r.head?.plan?.version ?? 0],
      ["deleted", r.head?.deleted ?? false],
      ["content_sha256", sha256(r.revisions[r.revisions.length - 1]?.revision?.content ?? "")],
    ];
  });
  await step("import_not_operator", async () => {
    const r = await tasks.importTask([
      {
        start: {
          task: { taskId: task, workspaceId: "ws-conformance", title: "Conformance" },
          revisionCount: 0,
        },
      },
    ]);
    return [["outcome", r.outcome]];
  });
}

async function main(): Promise<void> {
  const workspace = "ws-conformance";
  await step("create_task", async () => {
    const r = await tasks.createTask({ taskId: task, workspaceId: workspace, title: "Conformance" });
    return [
      ["task_id", r.task?.taskId ?? ""],
      ["workspace_id", r.task?.workspaceId ?? ""],
      ["title", r.task?.title ?? ""],
    ];
  });
  await step("create_task_again", async () => {
    await tasks.createTask({ taskId: task, workspaceId: workspace, title: "Conformance" });
    return [];
  });
  await step("create_task_elsewhere", async () => {
    await tasks.createTask({ taskId: `${task}-elsewhere`, workspaceId: "ws-elsewhere", title: "Elsewhere" });
    return [];
  });
  await step("get_task", async () => {
    const r = await tasks.getTask({ taskId: task });
    return [
      ["task_id", r.task?.taskId ?? ""],
      ["workspace_id", r.task?.workspaceId ?? ""],
    ];
  });
  await step("get_plan_none", async () => {
    await plans.getPlan({ taskId: task });
    return [];
  });
  await step("invalid_task_id", async () => {
    await plans.getPlan({ taskId: "" });
    return [];
  });
  await step("create_plan", async () =>
    written(await plans.createPlan({ taskId: task, title: "Conformance plan", content: INITIAL_PLAN })),
  );
  await step("create_plan_again", async () => {
    await plans.createPlan({ taskId: task, content: "# Other\n" });
    return [];
  });
  await step("append", async () =>
    written(
      await plans.updatePlan({
        taskId: task,
        mode: WriteMode.WRITE_MODE_APPEND,
        content: "\n## Findings\n- it works\n",
      }),
    ),
  );
  await step("get_plan", async () => {
    const p = (await plans.getPlan({ taskId: task })).plan;
    return [
      ["version", p?.version ?? 0],
      ["title", p?.title ?? ""],
      ["bytes", p?.contentBytes ?? 0],
      ["chars", p?.contentChars ?? 0],
      ["latest_revision", p?.latestRevisionNumber ?? 0],
      ["content_sha256", sha256(p?.content ?? "")],
    ];
  });
  await step("stale_replace", async () => {
    await plans.updatePlan({
      taskId: task,
      mode: WriteMode.WRITE_MODE_REPLACE,
      expectedVersion: 1,
      content: "# Plan\n- rewritten\n",
    });
    return [];
  });
  await step("replace_without_version", async () => {
    await plans.updatePlan({ taskId: task, mode: WriteMode.WRITE_MODE_REPLACE, content: "# Plan\n" });
    return [];
  });
  await step("replace_empty", async () => {
    await plans.updatePlan({
      taskId: task,
      mode: WriteMode.WRITE_MODE_REPLACE,
      expectedVersion: 2,
      content: "",
    });
    return [];
  });
  await step("replace_shrinking", async () => {
    await plans.updatePlan({
      taskId: task,
      mode: WriteMode.WRITE_MODE_REPLACE,
      expectedVersion: 2,
      content: "# P\n",
    });
    return [];
  });
  await step("unknown_write_mode", async () => {
    await plans.updatePlan({ taskId: task, mode: 7 as WriteMode, content: "x" });
    return [];
  });
  await step("append_blank", async () => {
    await plans.updatePlan({ taskId: task, mode: WriteMode.WRITE_MODE_APPEND, content: " \n\n" });
    return [];
  });
  await step("append_acknowledging_reduction", async () => {
    await plans.updatePlan({
      taskId: task,
      mode: WriteMode.WRITE_MODE_APPEND,
      content: "- x\n",
      acknowledgeReduction: true,
    });
    return [];
  });
  await step("append_too_large", async () => {
    await plans.updatePlan({ taskId: task, mode: WriteMode.WRITE_MODE_APPEND, content: "a".repeat(262_144) });
    return [];
  });
  await step("edit_absent", async () => {
    await plans.editPlan({ taskId: task, expectedVersion: 2, oldText: "step three", newText: "x" });
    return [];
  });
  await step("edit_not_unique", async () => {
    await plans.editPlan({ taskId: task, expectedVersion: 2, oldText: "step", newText: "x" });
    return [];
  });
  await step("edit_without_text", async () => {
    await plans.editPlan({ taskId: task, expectedVersion: 2, oldText: "", newText: "x" });
    return [];
  });
  await step("edit", async () =>
    written(
      await plans.editPlan({
        taskId: task,
        expectedVersion: 2,
        oldText: "step one",
        newText: "step one (done)",
      }),
    ),
  );
  const requestId = `${task}-retry`;
  const retried = () =>
    plans.updatePlan({ taskId: task, mode: WriteMode.WRITE_MODE_APPEND, content: "- retried\n", requestId });
  await step("append_with_request_id", async () => written(await retried()));
  await step("append_retried", async () => written(await retried()));
  await step("request_id_reused", async () => {
    await plans.updatePlan({
      taskId: task,
      mode: WriteMode.WRITE_MODE_APPEND,
      content: "- other\n",
      requestId,
    });
    return [];
  });
  await step("partial_read", async () => {
    const r = await plans.getPlan({ taskId: task, offset: 2, limit: 4 });
    return [
      ["content", r.plan?.content ?? ""],
      ["total_chars", r.totalChars],
      ["total_bytes", r.totalBytes],
      ["next_offset", r.nextOffset ?? -1],
      ["has_more", r.hasMore],
    ];
  });
  await step("offset_past_end", async () => {
    await plans.getPlan({ taskId: task, offset: 100_000 });
    return [];
  });
  await step("get_revision_missing", async () => {
    await plans.getPlanRevision({ taskId: task, revisionId: "00000000-0000-4000-8000-000000000000" });
    return [];
  });
  const first = { id: "", revisionVersion: "" };
  await step("list_revisions", async () => {
    const r = await plans.listPlanRevisions({ taskId: task });
    first.id = r.revisions[r.revisions.length - 1]?.id ?? "";
    return revisionList(r.revisions, r.nextPageToken);
  });
  await step("get_revision", async () => {
    const r = (await plans.getPlanRevision({ taskId: task, revisionId: first.id })).revision;
    first.revisionVersion = r?.revisionVersion ?? "";
    return [
      ["number", r?.revisionNumber ?? 0],
      ["bytes", r?.contentBytes ?? 0],
      ["content_sha256", sha256(r?.content ?? "")],
    ];
  });
  await step("revert", async () => written(await plans.revertPlan({ taskId: task, revisionId: first.id })));
  await step("save", async () =>
    written(await plans.savePlan({ taskId: task, content: "# Saved by an editor\n" })),
  );
  await step("restore_without_revision_version", async () => {
    await plans.restorePlanRevision({ taskId: task, revisionId: first.id, expectedVersion: 6 });
    return [];
  });
  await step("restore_changed_revision", async () => {
    await plans.restorePlanRevision({
      taskId: task,
      revisionId: first.id,
      expectedVersion: 6,
      expectedRevisionVersion: "stale",
    });
    return [];
  });
  await step("restore", async () => {
    const r = await plans.restorePlanRevision({
      taskId: task,
      revisionId: first.id,
      expectedVersion: 6,
      expectedRevisionVersion: first.revisionVersion,
    });
    return [
      ["status", restoreStatusToJSON(r.status ?? RestoreStatus.RESTORE_STATUS_UNSPECIFIED)],
      ["version", r.plan?.version ?? 0],
      ["revision", r.revision?.number ?? 0],
    ];
  });
  await step("list_revisions_page", async () => {
    const r = await plans.listPlanRevisions({ taskId: task, pageSize: 2 });
    return revisionList(r.revisions, r.nextPageToken === "" ? "" : "<token>");
  });
  await step("mark_implementation_started", async () => {
    const p = (
      await plans.markImplementationStarted({ taskId: task, sessionId: "session-1", actor: "conformance" })
    ).plan;
    return [
      ["version", p?.version ?? 0],
      ["started_by", p?.implementationStartedBy ?? ""],
      ["session", p?.implementationStartedSessionId ?? ""],
    ];
  });
  await step("watch_snapshot", async () => {
    const [c] = await watchTake({ taskId: task, includeContent: true }, 1);
    return [
      ["kind", kindOf(c)],
      ["version", c?.plan?.version ?? 0],
      ["content_sha256", sha256(c?.plan?.content ?? "")],
    ];
  });
  await step("watch_history", async () => changeList(await watchTake({ taskId: task, afterVersion: 4 }, 4)));
  await step("watch_ahead", async () => changeList(await watchTake({ taskId: task, afterVersion: 100 }, 1)));
  await step("delete_plan_stale", async () => {
    await plans.deletePlan({ taskId: task, expectedVersion: 1 });
    return [];
  });
  await step("delete_plan", async () => {
    await plans.deletePlan({ taskId: task });
    return [];
  });
  await step("watch_after_delete", async () =>
    changeList(await watchTake({ taskId: task, afterVersion: 7 }, 1)),
  );
  await step("get_plan_deleted", async () => {
    await plans.getPlan({ taskId: task });
    return [];
  });
  await step("token_missing", async () => {
    await readAs(undefined);
    return [];
  });
  await step("token_invalid", async () => {
    await readAs("not-a-token");
    return [];
  });
  await step("token_expired", async () => {
    await readAs(expiredToken);
    return [];
  });
  await step("deadline_exceeded", async () => {
    await plans.getPlan({ taskId: task }, { deadline: Date.now() - 1 });
    return [];
  });
  await resilience();
  await changesAndMerge();
  await exportAndImport();
  await step("delete_task", async () => {
    await tasks.deleteTask({ taskId: task });
    return [];
  });
  await step("get_task_deleted", async () => {
    await tasks.getTask({ taskId: task });
    return [];
  });
}

/** The resilience steps: retries across a killed replica, a resumed watch, a token provider. */
async function resilience(): Promise<void> {
  const failover = createClient(failoverTarget, { token, tls, defaultTimeoutMs: 10_000 });
  const fragment = "retried fragment";
  try {
    await step("recreate_plan", async () =>
      written(
        await plans.createPlan({
          taskId: task,
          title: "Resilience",
          content: "# Resilience\n\nKept across replicas.",
        }),
      ),
    );
    await step("failover_read", async () => [
      ["version", (await failover.plans.getPlan({ taskId: task })).plan?.version ?? 0],
    ]);
    await readLine();
    await step("retried_append", async () =>
      written(
        await failover.plans.updatePlan({
          taskId: task,
          mode: WriteMode.WRITE_MODE_APPEND,
          content: fragment,
        }),
      ),
    );
    await step("retried_append_applied", async () => {
      const read = await plans.getPlan({ taskId: task });
      return [
        ["version", read.plan?.version ?? 0],
        ["occurrences", (read.plan?.content ?? "").split(fragment).length - 1],
      ];
    });
    const watch: PlanWatch = failover.plans.watch(task);
    const changes = watch[Symbol.asyncIterator]();
    const nextChange = async (): Promise<[string, Value][]> => {
      const { value } = await changes.next();
      return [
        ["kind", kindOf(value as PlanChange | undefined)],
        ["version", (value as PlanChange | undefined)?.plan?.version ?? 0],
      ];
    };
    await step("watch_resume_open", nextChange);
    await readLine();
    await step("watch_resume_append", async () =>
      written(
        await failover.plans.updatePlan({
          taskId: task,
          mode: WriteMode.WRITE_MODE_APPEND,
          content: "after the restart",
        }),
      ),
    );
    await step("watch_resumed", nextChange);
    await step("watch_cancelled", async () => {
      watch.cancel();
      const end = await changes.next();
      if (!end.done) throw new Error("the watch went on after cancel()");
      return [];
    });
    await step("watch_expired", async () => {
      for await (const change of plans.watch(task, { afterVersion: 100 })) void change;
      return [];
    });
    const [shortToken = "", exp = "0"] = (await readLine()).split(" ");
    const expiresAt = Number(exp) * 1000;
    let providerCalls = 0;
    let last = "";
    const refreshing = createClient(target, {
      tls,
      defaultTimeoutMs: 10_000,
      tokenProvider: () => {
        providerCalls++;
        const refresh = Date.now() >= expiresAt - 1_000;
        last = refresh ? "refreshed" : "short";
        return refresh ? token : shortToken;
      },
    });
    const readThrough = async (options = {}): Promise<[string, Value][]> => [
      ["version", (await refreshing.plans.getPlan({ taskId: task }, options)).plan?.version ?? 0],
      ["provider_calls", providerCalls],
      ["token", last],
    ];
    try {
      await step("token_provider_first", () => readThrough());
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt + 1_000 - Date.now())));
      await step("token_override_expired", () => readThrough({ token: shortToken }));
      await step("token_provider_refreshed", () => readThrough());
    } finally {
      refreshing.close();
    }
  } finally {
    failover.close();
  }
}

const diffFields = (diff: PlanDiff | undefined): [string, Value][] => [
  ["old_bytes", diff?.oldBytes ?? 0],
  ["new_bytes", diff?.newBytes ?? 0],
  ["diff_bytes", diff?.diffBytes ?? 0],
  ["lines_added", diff?.linesAdded ?? 0],
  ["lines_removed", diff?.linesRemoved ?? 0],
];

const changesFields = (r: GetPlanChangesResponse): [string, Value][] => [
  ["version", r.plan?.version ?? 0],
  ["since_version", r.sinceVersion],
  ...diffFields(r.diff),
  [
    "changes",
    r.changes
      .map(
        (c) =>
          `${c.version}:${planChangeKindToJSON(c.kind).replace("PLAN_CHANGE_KIND_", "")}:${authorKindToJSON(c.author?.kind ?? 0).replace("AUTHOR_KIND_", "")}`,
      )
      .join(","),
  ],
  ["changes_truncated", r.changesTruncated],
  ["diff", r.diff?.unifiedDiff ?? ""],
];

/** Changes since a version, a merged edit, a conflict, the refusals, a revision diff (issue 44). */
async function changesAndMerge(): Promise<void> {
  const read = (await plans.getPlan({ taskId: task })).plan;
  const since = read?.version ?? 0;
  await step("changes_none", async () =>
    changesFields(await plans.getPlanChanges({ taskId: task, sinceVersion: since })),
  );
  await step("other_save", async () =>
    written(
      await plans.savePlan({
        taskId: task,
        content: (read?.content ?? "").replace("retried fragment", "retried fragment, checked"),
      }),
    ),
  );
  await step("changes_since", async () =>
    changesFields(await plans.getPlanChanges({ taskId: task, sinceVersion: since })),
  );
  await step("merged_edit", async () => {
    const r = await plans.editPlan({
      taskId: task,
      expectedVersion: since,
      oldText: "Kept across replicas.",
      newText: "Kept across replicas, merged.",
      merge: true,
    });
    return [
      ...written(r),
      ["merged", `${r.merge?.fromVersion ?? "-"}..${r.merge?.toVersion ?? "-"}`],
      ["merge_method", mergeMethodToJSON(r.mergeMethod ?? 0).replace("MERGE_METHOD_", "")],
    ];
  });
  const conflicting = {
    taskId: task,
    expectedVersion: since,
    oldText: "retried fragment\n",
    newText: "retried twice\n",
    merge: true,
  };
  await step("merge_conflict", async () => written(await plans.editPlan(conflicting)));
  await step("merge_conflict_typed", async () => {
    const conflict = mergeConflictOf(await plans.editPlan(conflicting).catch((error: unknown) => error));
    return [
      ["base_version", conflict?.baseVersion ?? "-"],
      ["current_version", conflict?.currentVersion ?? "-"],
      ["conflict_regions", conflict?.conflictRegions ?? "-"],
      ["conflicts_bytes", Buffer.byteLength(conflict?.conflicts ?? "")],
    ];
  });
  await step("merge_on_append", async () =>
    written(
      await plans.updatePlan({ taskId: task, mode: WriteMode.WRITE_MODE_APPEND, content: "x", merge: true }),
    ),
  );
  await step("changes_ahead", async () =>
    changesFields(await plans.getPlanChanges({ taskId: task, sinceVersion: 100 })),
  );
  await step("changes_ahead_typed", async () => {
    const history = historyUnavailableOf(
      await plans.getPlanChanges({ taskId: task, sinceVersion: 100 }).catch((error: unknown) => error),
    );
    return [
      ["version", history?.version ?? "-"],
      ["current_version", history?.currentVersion ?? "-"],
      ["oldest_version", history?.oldestVersion ?? "-"],
    ];
  });
  await step("diff_revisions", async () => {
    const [newer, older] = (await plans.listPlanRevisions({ taskId: task, pageSize: 2 })).revisions;
    const r = await plans.diffPlanRevisions({
      taskId: task,
      fromRevisionId: older?.id ?? "",
      toRevisionId: newer?.id ?? "",
    });
    return [
      ["from", r.fromRevision?.revisionNumber ?? 0],
      ["to", r.toRevision?.revisionNumber ?? 0],
      ["to_merged", `${r.toRevision?.merge?.fromVersion ?? "-"}..${r.toRevision?.merge?.toVersion ?? "-"}`],
      ...diffFields(r.diff),
      ["diff", r.diff?.unifiedDiff ?? ""],
    ];
  });
}

const stdinLines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
/** The test's answer to the line just printed. */
async function readLine(): Promise<string> {
  const { value, done } = await stdinLines.next();
  if (done) throw new Error("stdin ended before the test answered");
  return value;
}

/** The first `count` messages of a WatchPlan stream, then cancels it. */
async function watchTake(
  request: { taskId: string; afterVersion?: number; includeContent?: boolean },
  count: number,
): Promise<PlanChange[]> {
  const stream = plans.watchPlan(request, { timeoutMs: 10_000 });
  stream.on("error", () => undefined); // the cancel below ends it with CANCELLED
  const got: PlanChange[] = [];
  try {
    for await (const change of stream as AsyncIterable<PlanChange>) {
      got.push(change);
      if (got.length >= count) break;
    }
  } finally {
    stream.cancel();
  }
  return got;
}

const kindOf = (c: PlanChange | undefined): string =>
  c ? planChangeKindToJSON(c.kind).replace("PLAN_CHANGE_KIND_", "") : "-";

const changeList = (changes: PlanChange[]): [string, Value][] => [
  ["kinds", changes.map(kindOf).join(",")],
  ["versions", changes.map((c) => c.plan?.version ?? 0).join(",")],
  ["revisions", changes.map((c) => (c.revision ? String(c.revision.number) : "-")).join(",")],
];

/** GetPlan through a client of its own that sends `bearer` as its token (none when undefined). */
async function readAs(bearer: string | undefined): Promise<void> {
  const other = createClient(target, { token: bearer, tls });
  try {
    await other.plans.getPlan({ taskId: task });
  } finally {
    other.close();
  }
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => {
    client.close();
    process.stdin.destroy();
  });
