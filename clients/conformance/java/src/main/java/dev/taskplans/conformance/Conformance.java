package dev.taskplans.conformance;

import dev.taskplans.client.FieldViolation;
import dev.taskplans.client.HistoryUnavailable;
import dev.taskplans.client.MergeConflict;
import dev.taskplans.client.PlanWatch;
import dev.taskplans.client.TaskPlansClient;
import dev.taskplans.client.TaskPlansException;
import dev.taskplans.v1.CreatePlanRequest;
import dev.taskplans.v1.CreateTaskRequest;
import dev.taskplans.v1.CreateTaskResponse;
import dev.taskplans.v1.DeletePlanRequest;
import dev.taskplans.v1.DeleteTaskRequest;
import dev.taskplans.v1.DiffPlanRevisionsRequest;
import dev.taskplans.v1.DiffPlanRevisionsResponse;
import dev.taskplans.v1.EditPlanRequest;
import dev.taskplans.v1.ExportTaskRequest;
import dev.taskplans.v1.ExportTaskResponse;
import dev.taskplans.v1.ImportTaskRequest;
import dev.taskplans.v1.ImportTaskResponse;
import dev.taskplans.v1.ImportTaskStart;
import dev.taskplans.v1.ListTasksRequest;
import dev.taskplans.v1.ListTasksResponse;
import dev.taskplans.v1.Task;
import dev.taskplans.v1.GetPlanChangesRequest;
import dev.taskplans.v1.GetPlanChangesResponse;
import dev.taskplans.v1.GetPlanRequest;
import dev.taskplans.v1.GetPlanResponse;
import dev.taskplans.v1.GetPlanRevisionRequest;
import dev.taskplans.v1.GetPlanRevisionResponse;
import dev.taskplans.v1.GetTaskRequest;
import dev.taskplans.v1.GetTaskResponse;
import dev.taskplans.v1.ListPlanRevisionsRequest;
import dev.taskplans.v1.ListPlanRevisionsResponse;
import dev.taskplans.v1.MarkImplementationStartedRequest;
import dev.taskplans.v1.MergeMarker;
import dev.taskplans.v1.Plan;
import dev.taskplans.v1.PlanChange;
import dev.taskplans.v1.PlanDiff;
import dev.taskplans.v1.PlanRevision;
import dev.taskplans.v1.RestorePlanRevisionRequest;
import dev.taskplans.v1.RestorePlanRevisionResponse;
import dev.taskplans.v1.RevertPlanRequest;
import dev.taskplans.v1.SavePlanRequest;
import dev.taskplans.v1.UpdatePlanRequest;
import dev.taskplans.v1.WritePlanResponse;
import dev.taskplans.v1.WriteMode;
import io.grpc.Deadline;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The conformance scenario (clients/conformance/README.md) through the Java client. Prints the
 * canonical transcript on stdout, and reads the lines of the resilience steps from stdin. Environment:
 * TASKPLANS_TARGET, TASKPLANS_FAILOVER_TARGET, TASKPLANS_TASK_ID, TASKPLANS_TOKEN,
 * TASKPLANS_EXPIRED_TOKEN, TASKPLANS_TLS_* (optional: CA, CERT, KEY, SERVER_NAME).
 */
public final class Conformance {
  private Conformance() {}

  private record Field(String key, Object value) {}

  @FunctionalInterface
  private interface Step {
    List<Field> run() throws Exception;
  }

  private static final Pattern UUID =
      Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  private static final PrintStream OUT =
      new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
  private static final BufferedReader STDIN =
      new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
  private static final ScheduledExecutorService TIMERS =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "watch-timeout");
            t.setDaemon(true);
            return t;
          });

  private static final String TASK = mustEnv("TASKPLANS_TASK_ID");
  private static final String TARGET = mustEnv("TASKPLANS_TARGET");
  private static final String WORKSPACE = "ws-conformance";

  // Over 2,000 characters, so that the reduction guard judges a replacement of it.
  private static final String INITIAL_PLAN =
      "# Plan\n- step one\n- step two\n\n## Notes\n"
          + "- a note that keeps this plan long enough for the reduction guard\n".repeat(40);

  private static String mustEnv(String name) {
    String value = System.getenv(name);
    if (value == null || value.isEmpty()) {
      System.err.println(name + " is not set");
      System.exit(2);
    }
    return value;
  }

  private static String env(String name) {
    String value = System.getenv(name);
    return value == null || value.isEmpty() ? null : value;
  }

  // ---- the line format ----------------------------------------------------------------------------

  private static String quote(String text) {
    return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
  }

  private static String show(Object value) {
    return value instanceof String s ? quote(s) : String.valueOf(value);
  }

  private static String fields(List<Field> pairs) {
    StringBuilder b = new StringBuilder();
    for (Field p : pairs) b.append(' ').append(p.key()).append('=').append(show(p.value()));
    return b.toString();
  }

  private static String normalize(String line) {
    return UUID.matcher(line.replace(TASK, "<task>")).replaceAll("<uuid>");
  }

  /** Prints one step's line: its fields, or its error read from the client's typed exception. */
  private static void step(String name, Step call) {
    String line;
    try {
      line = name + ": OK" + fields(call.run());
    } catch (TaskPlansException e) {
      line = name + ": " + errorLine(e);
    } catch (Exception e) {
      System.err.println(name + ": not a TaskPlansException: " + e);
      e.printStackTrace();
      System.exit(1);
      return;
    }
    OUT.print(normalize(line) + "\n");
    OUT.flush();
  }

  /**
   * {@code CODE REASON metadata... violations... | "message"}; {@code CODE -} plus violations when the
   * error carries no ErrorInfo (the client library raised it; its wording differs per language).
   */
  private static String errorLine(TaskPlansException e) {
    String reason = "-";
    String message = "";
    List<Field> meta = new ArrayList<>();
    if (e.errorInfo().isPresent()) {
      reason = e.reason();
      message = " | " + quote(e.getMessage());
      e.metadata().entrySet().stream()
          .filter(entry -> !entry.getKey().equals("request_id"))
          .sorted(Map.Entry.comparingByKey())
          .forEach(entry -> meta.add(new Field(entry.getKey(), entry.getValue())));
    }
    for (FieldViolation v : e.fieldViolations()) meta.add(new Field("violation." + v.field(), v.description()));
    return e.code().name() + " " + reason + fields(meta) + message;
  }

  private static List<Field> written(WritePlanResponse r) {
    return List.of(
        new Field("version", r.getPlan().getVersion()),
        new Field("revision", r.getRevision().getNumber()),
        new Field("coalesced", r.getRevision().getCoalesced()),
        new Field("bytes", r.getPlan().getContentByteCount()));
  }

  private static List<Field> revisionList(List<PlanRevision> revisions, String nextPageToken) {
    return List.of(
        new Field("count", revisions.size()),
        new Field("numbers", join(revisions, r -> Long.toString(r.getRevisionNumber()))),
        new Field("bytes", join(revisions, r -> Long.toString(r.getContentByteCount()))),
        new Field(
            "reverts",
            join(revisions, r -> r.hasRevertOfRevisionId() && !r.getRevertOfRevisionId().isEmpty() ? "yes" : "no")),
        new Field("next_page_token", nextPageToken));
  }

  private static <T> String join(List<T> items, Function<T, String> show) {
    return items.stream().map(show).collect(Collectors.joining(","));
  }

  private static String kindOf(PlanChange c) {
    return c.getKind().name().replaceFirst("^PLAN_CHANGE_KIND_", "");
  }

  private static List<Field> changeList(List<PlanChange> changes) {
    return List.of(
        new Field("kinds", join(changes, Conformance::kindOf)),
        new Field("versions", join(changes, c -> Long.toString(c.getPlan().getVersion()))),
        new Field("revisions", join(changes, c -> c.hasRevision() ? Long.toString(c.getRevision().getNumber()) : "-")));
  }

  private static String sha(String text) throws NoSuchAlgorithmException {
    return HexFormat.of()
        .formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
  }

  // ---- clients ------------------------------------------------------------------------------------

  /** A client of the package's defaults (retries on) with a default timeout of 10 s. */
  private static TaskPlansClient dial(String to, Function<TaskPlansClient.Builder, TaskPlansClient.Builder> options) {
    TaskPlansClient.Builder builder = TaskPlansClient.builder(to).defaultTimeout(Duration.ofSeconds(10));
    // TLS when TASKPLANS_TLS_CA is set (mTLS with TASKPLANS_TLS_CERT and TASKPLANS_TLS_KEY), else plaintext.
    if (env("TASKPLANS_TLS_CA") != null)
      builder.tls(
          env("TASKPLANS_TLS_CA"),
          env("TASKPLANS_TLS_CERT"),
          env("TASKPLANS_TLS_KEY"),
          env("TASKPLANS_TLS_SERVER_NAME"));
    return options.apply(builder).build();
  }

  /** The first {@code n} changes of a watch (closed after 10 s at most), then closes it. */
  private static List<PlanChange> watchTake(TaskPlansClient client, int n, Long afterVersion, boolean includeContent) {
    List<PlanChange> got = new ArrayList<>();
    try (PlanWatch watch = client.watch(TASK, afterVersion, includeContent)) {
      ScheduledFuture<?> timeout = TIMERS.schedule(watch::close, 10, TimeUnit.SECONDS);
      try {
        while (got.size() < n && watch.hasNext()) got.add(watch.next());
      } finally {
        timeout.cancel(false);
      }
    }
    if (got.size() < n)
      throw new IllegalStateException("the watch ended after " + got.size() + " changes without an error");
    return got;
  }

  private static List<Field> changeFields(PlanWatch watch) {
    if (!watch.hasNext()) throw new IllegalStateException("the watch ended without a change");
    PlanChange change = watch.next();
    return List.of(new Field("kind", kindOf(change)), new Field("version", change.getPlan().getVersion()));
  }

  private static GetPlanRequest readTask() {
    return GetPlanRequest.newBuilder().setTaskId(TASK).build();
  }

  /** GetPlan through a connection of its own sending {@code token} (none when empty). */
  private static List<Field> readAs(String token) {
    try (TaskPlansClient client = dial(TARGET, b -> token.isEmpty() ? b : b.token(token))) {
      client.getPlan(readTask());
      return List.of();
    }
  }

  /** Waits for the test's answer to the line just printed. */
  private static String readLine() throws IOException {
    String line = STDIN.readLine();
    if (line == null) {
      System.err.println("stdin ended before the test answered");
      System.exit(2);
    }
    return line;
  }

  // ---- the scenario -------------------------------------------------------------------------------

  public static void main(String[] args) throws Exception {
    String token = mustEnv("TASKPLANS_TOKEN");
    try (TaskPlansClient client = dial(TARGET, b -> b.token(token))) {
      scenario(client, token);
    }
    OUT.flush();
    System.exit(0);
  }

  private static void scenario(TaskPlansClient plans, String token) throws Exception {
    WriteMode append = WriteMode.WRITE_MODE_APPEND;
    WriteMode replace = WriteMode.WRITE_MODE_REPLACE;
    CreateTaskRequest createTask =
        CreateTaskRequest.newBuilder().setTaskId(TASK).setWorkspaceId(WORKSPACE).setTitle("Conformance").build();

    step("create_task", () -> {
      CreateTaskResponse r = plans.createTask(createTask);
      return List.of(
          new Field("task_id", r.getTask().getTaskId()),
          new Field("workspace_id", r.getTask().getWorkspaceId()),
          new Field("title", r.getTask().getTitle()));
    });
    step("create_task_again", () -> {
      plans.createTask(createTask);
      return List.of();
    });
    step("create_task_elsewhere", () -> {
      plans.createTask(
          CreateTaskRequest.newBuilder()
              .setTaskId(TASK + "-elsewhere")
              .setWorkspaceId("ws-elsewhere")
              .setTitle("Elsewhere")
              .build());
      return List.of();
    });
    step("get_task", () -> {
      GetTaskResponse r = plans.getTask(GetTaskRequest.newBuilder().setTaskId(TASK).build());
      return List.of(
          new Field("task_id", r.getTask().getTaskId()), new Field("workspace_id", r.getTask().getWorkspaceId()));
    });
    step("get_plan_none", () -> {
      plans.getPlan(readTask());
      return List.of();
    });
    step("invalid_task_id", () -> {
      plans.getPlan(GetPlanRequest.newBuilder().setTaskId("").build());
      return List.of();
    });
    step("create_plan", () -> written(plans.createPlan(
        CreatePlanRequest.newBuilder().setTaskId(TASK).setTitle("Conformance plan").setContent(INITIAL_PLAN).build())));
    step("create_plan_again", () -> {
      plans.createPlan(CreatePlanRequest.newBuilder().setTaskId(TASK).setContent("# Other\n").build());
      return List.of();
    });
    step("append", () -> written(plans.updatePlan(
        UpdatePlanRequest.newBuilder().setTaskId(TASK).setMode(append).setContent("\n## Findings\n- it works\n").build())));
    step("get_plan", () -> {
      Plan p = plans.getPlan(readTask()).getPlan();
      return List.of(
          new Field("version", p.getVersion()),
          new Field("title", p.getTitle()),
          new Field("bytes", p.getContentByteCount()),
          new Field("chars", p.getContentChars()),
          new Field("latest_revision", p.getLatestRevisionNumber()),
          new Field("content_sha256", sha(p.getContent())));
    });
    Function<UpdatePlanRequest.Builder, Step> update = r -> () -> {
      plans.updatePlan(r.setTaskId(TASK).build());
      return List.of();
    };
    step("stale_replace", update.apply(
        UpdatePlanRequest.newBuilder().setMode(replace).setExpectedVersion(1).setContent("# Plan\n- rewritten\n")));
    step("replace_without_version", update.apply(UpdatePlanRequest.newBuilder().setMode(replace).setContent("# Plan\n")));
    step("replace_empty", update.apply(
        UpdatePlanRequest.newBuilder().setMode(replace).setExpectedVersion(2).setContent("")));
    step("replace_shrinking", update.apply(
        UpdatePlanRequest.newBuilder().setMode(replace).setExpectedVersion(2).setContent("# P\n")));
    step("unknown_write_mode", update.apply(UpdatePlanRequest.newBuilder().setModeValue(7).setContent("x")));
    step("append_blank", update.apply(UpdatePlanRequest.newBuilder().setMode(append).setContent(" \n\n")));
    step("append_acknowledging_reduction", update.apply(
        UpdatePlanRequest.newBuilder().setMode(append).setContent("- x\n").setAcknowledgeReduction(true)));
    step("append_too_large", update.apply(
        UpdatePlanRequest.newBuilder().setMode(append).setContent("a".repeat(262_144))));
    Function<String[], Step> edit = texts -> () -> written(plans.editPlan(
        EditPlanRequest.newBuilder()
            .setTaskId(TASK)
            .setExpectedVersion(2)
            .setOldText(texts[0])
            .setNewText(texts[1])
            .build()));
    step("edit_absent", edit.apply(new String[] {"step three", "x"}));
    step("edit_not_unique", edit.apply(new String[] {"step", "x"}));
    step("edit_without_text", edit.apply(new String[] {"", "x"}));
    step("edit", edit.apply(new String[] {"step one", "step one (done)"}));
    String requestId = TASK + "-retry";
    Function<String, Step> retried = content -> () -> written(plans.updatePlan(
        UpdatePlanRequest.newBuilder()
            .setTaskId(TASK)
            .setMode(append)
            .setContent(content)
            .setRequestId(requestId)
            .build()));
    step("append_with_request_id", retried.apply("- retried\n"));
    step("append_retried", retried.apply("- retried\n"));
    step("request_id_reused", retried.apply("- other\n"));
    step("partial_read", () -> {
      GetPlanResponse r =
          plans.getPlan(GetPlanRequest.newBuilder().setTaskId(TASK).setOffset(2).setLimit(4).build());
      return List.of(
          new Field("content", r.getPlan().getContent()),
          new Field("total_chars", r.getTotalChars()),
          new Field("total_bytes", r.getTotalBytes()),
          new Field("next_offset", r.hasNextOffset() ? r.getNextOffset() : -1L),
          new Field("has_more", r.getHasMore()));
    });
    step("offset_past_end", () -> {
      plans.getPlan(GetPlanRequest.newBuilder().setTaskId(TASK).setOffset(100_000).build());
      return List.of();
    });
    step("get_revision_missing", () -> {
      plans.getPlanRevision(
          GetPlanRevisionRequest.newBuilder()
              .setTaskId(TASK)
              .setRevisionId("00000000-0000-4000-8000-000000000000")
              .build());
      return List.of();
    });
    String[] first = {"", ""}; // the first revision's id and revision_version
    step("list_revisions", () -> {
      ListPlanRevisionsResponse r =
          plans.listPlanRevisions(ListPlanRevisionsRequest.newBuilder().setTaskId(TASK).build());
      if (r.getRevisionsCount() > 0) first[0] = r.getRevisions(r.getRevisionsCount() - 1).getId();
      return revisionList(r.getRevisionsList(), r.getNextPageToken());
    });
    step("get_revision", () -> {
      GetPlanRevisionResponse r =
          plans.getPlanRevision(GetPlanRevisionRequest.newBuilder().setTaskId(TASK).setRevisionId(first[0]).build());
      first[1] = r.getRevision().getRevisionVersion();
      return List.of(
          new Field("number", r.getRevision().getRevisionNumber()),
          new Field("bytes", r.getRevision().getContentByteCount()),
          new Field("content_sha256", sha(r.getRevision().getContent())));
    });
    step("revert", () -> written(plans.revertPlan(
        RevertPlanRequest.newBuilder().setTaskId(TASK).setRevisionId(first[0]).build())));
    step("save", () -> written(plans.savePlan(
        SavePlanRequest.newBuilder().setTaskId(TASK).setContent("# Saved by an editor\n").build())));
    Function<String, Step> restore = revisionVersion -> () -> {
      RestorePlanRevisionResponse r =
          plans.restorePlanRevision(
              RestorePlanRevisionRequest.newBuilder()
                  .setTaskId(TASK)
                  .setRevisionId(first[0])
                  .setExpectedVersion(6)
                  .setExpectedRevisionVersion(revisionVersion)
                  .build());
      return List.of(
          new Field("status", r.getStatus().name()),
          new Field("version", r.getPlan().getVersion()),
          new Field("revision", r.getRevision().getNumber()));
    };
    step("restore_without_revision_version", restore.apply(""));
    step("restore_changed_revision", restore.apply("stale"));
    step("restore", () -> restore.apply(first[1]).run());
    step("list_revisions_page", () -> {
      ListPlanRevisionsResponse r =
          plans.listPlanRevisions(ListPlanRevisionsRequest.newBuilder().setTaskId(TASK).setPageSize(2).build());
      return revisionList(r.getRevisionsList(), r.getNextPageToken().isEmpty() ? "" : "<token>");
    });
    step("mark_implementation_started", () -> {
      Plan p =
          plans
              .markImplementationStarted(
                  MarkImplementationStartedRequest.newBuilder()
                      .setTaskId(TASK)
                      .setSessionId("session-1")
                      .setActor("conformance")
                      .build())
              .getPlan();
      return List.of(
          new Field("version", p.getVersion()),
          new Field("started_by", p.getImplementationStartedBy()),
          new Field("session", p.getImplementationStartedSessionId()));
    });
    step("watch_snapshot", () -> {
      PlanChange c = watchTake(plans, 1, null, true).get(0);
      return List.of(
          new Field("kind", kindOf(c)),
          new Field("version", c.getPlan().getVersion()),
          new Field("content_sha256", sha(c.getPlan().getContent())));
    });
    step("watch_history", () -> changeList(watchTake(plans, 4, 4L, false)));
    step("watch_ahead", () -> changeList(watchTake(plans, 1, 100L, false)));
    step("delete_plan_stale", () -> {
      plans.deletePlan(DeletePlanRequest.newBuilder().setTaskId(TASK).setExpectedVersion(1).build());
      return List.of();
    });
    step("delete_plan", () -> {
      plans.deletePlan(DeletePlanRequest.newBuilder().setTaskId(TASK).build());
      return List.of();
    });
    step("watch_after_delete", () -> changeList(watchTake(plans, 1, 7L, false)));
    step("get_plan_deleted", () -> {
      plans.getPlan(readTask());
      return List.of();
    });
    step("token_missing", () -> readAs(""));
    step("token_invalid", () -> readAs("not-a-token"));
    step("token_expired", () -> readAs(mustEnv("TASKPLANS_EXPIRED_TOKEN")));
    step("deadline_exceeded", () -> {
      plans.withDeadline(Deadline.after(-1, TimeUnit.MILLISECONDS)).getPlan(readTask());
      return List.of();
    });
    resilience(plans, token);
    changesAndMerge(plans);
    exportAndImport(plans);
    step("delete_task", () -> {
      plans.deleteTask(DeleteTaskRequest.newBuilder().setTaskId(TASK).build());
      return List.of();
    });
    step("get_task_deleted", () -> {
      plans.getTask(GetTaskRequest.newBuilder().setTaskId(TASK).build());
      return List.of();
    });
  }

  /**
   * The resilience steps (clients/conformance/README.md): a failover replica the test kills and
   * restarts, a watch that resumes, a token provider and a per-call token.
   */
  private static void resilience(TaskPlansClient client, String token) throws Exception {
    String fragment = "retried fragment";
    try (TaskPlansClient failover = dial(mustEnv("TASKPLANS_FAILOVER_TARGET"), b -> b.token(token))) {
      step("recreate_plan", () -> written(client.createPlan(
          CreatePlanRequest.newBuilder()
              .setTaskId(TASK)
              .setTitle("Resilience")
              .setContent("# Resilience\n\nKept across replicas.")
              .build())));
      step("failover_read", () -> List.of(new Field("version", failover.getPlan(readTask()).getPlan().getVersion())));
      readLine(); // the test now holds back the replica's answers
      // No request_id: the package sets one, the same on the attempt after the replica's restart.
      step("retried_append", () -> written(failover.updatePlan(
          UpdatePlanRequest.newBuilder().setTaskId(TASK).setMode(WriteMode.WRITE_MODE_APPEND).setContent(fragment).build())));
      step("retried_append_applied", () -> {
        Plan p = client.getPlan(readTask()).getPlan();
        int occurrences = p.getContent().split(Pattern.quote(fragment), -1).length - 1;
        return List.of(new Field("version", p.getVersion()), new Field("occurrences", occurrences));
      });

      try (PlanWatch watch = failover.watch(TASK)) {
        step("watch_resume_open", () -> changeFields(watch));
        readLine(); // the test stops the replica (WATCH_DRAINING) and restarts it
        step("watch_resume_append", () -> written(failover.updatePlan(
            UpdatePlanRequest.newBuilder()
                .setTaskId(TASK)
                .setMode(WriteMode.WRITE_MODE_APPEND)
                .setContent("after the restart")
                .build())));
        step("watch_resumed", () -> changeFields(watch));
        step("watch_cancelled", () -> {
          watch.close();
          if (watch.hasNext()) throw new IllegalStateException("the watch went on after close()");
          return List.of();
        });
      }
    }
    step("watch_expired", () -> {
      watchTake(client, 1, 100L, false);
      return List.of();
    });

    String[] answer = readLine().trim().split("\\s+"); // "<token> <exp>"
    if (answer.length != 2) {
      System.err.println("expected \"<token> <exp>\" on stdin, got " + String.join(" ", answer));
      System.exit(2);
    }
    String shortToken = answer[0];
    long expiresAtMillis = Long.parseLong(answer[1]) * 1000;
    int[] calls = {0};
    String[] last = {""};
    try (TaskPlansClient refreshing =
        dial(TARGET, b -> b.tokenProvider(() -> {
          calls[0]++;
          if (System.currentTimeMillis() < expiresAtMillis - 1000) {
            last[0] = "short";
            return shortToken;
          }
          last[0] = "refreshed";
          return token;
        }))) {
      Function<TaskPlansClient, Step> readThrough = through -> () -> {
        long version = through.getPlan(readTask()).getPlan().getVersion();
        return List.of(new Field("version", version), new Field("provider_calls", calls[0]), new Field("token", last[0]));
      };
      step("token_provider_first", readThrough.apply(refreshing));
      long wait = expiresAtMillis + 1000 - System.currentTimeMillis();
      if (wait > 0) Thread.sleep(wait);
      step("token_override_expired", readThrough.apply(refreshing.withToken(shortToken)));
      step("token_provider_refreshed", readThrough.apply(refreshing));
    }
  }

  private static List<Field> diffFields(PlanDiff d) {
    return List.of(
        new Field("old_bytes", d.getOldBytes()),
        new Field("new_bytes", d.getNewBytes()),
        new Field("diff_bytes", d.getDiffBytes()),
        new Field("lines_added", d.getLinesAdded()),
        new Field("lines_removed", d.getLinesRemoved()));
  }

  private static List<Field> changesFields(GetPlanChangesResponse r) {
    List<Field> pairs = new ArrayList<>();
    pairs.add(new Field("version", r.getPlan().getVersion()));
    pairs.add(new Field("since_version", r.getSinceVersion()));
    pairs.addAll(diffFields(r.getDiff()));
    pairs.add(
        new Field(
            "changes",
            join(
                r.getChangesList(),
                c -> c.getVersion()
                    + ":"
                    + c.getKind().name().replaceFirst("^PLAN_CHANGE_KIND_", "")
                    + ":"
                    + c.getAuthor().getKind().name().replaceFirst("^AUTHOR_KIND_", ""))));
    pairs.add(new Field("changes_truncated", r.getChangesTruncated()));
    pairs.add(new Field("diff", r.getDiff().getUnifiedDiff()));
    return pairs;
  }

  private static String mergedOver(boolean present, MergeMarker m) {
    return present ? m.getFromVersion() + ".." + m.getToVersion() : "-..-";
  }

  private static Object orDash(Optional<?> value) {
    return value.isPresent() ? value.get() : "-";
  }

  /** The steps of issue 44: changes since a version, a merged edit, a conflict, the refusals, a revision diff. */
  /** The steps of issue 46: the task listed, exported in one page, an import refused to a non-operator. */
  private static void exportAndImport(TaskPlansClient plans) {
    step("list_tasks", () -> {
      ListTasksResponse r =
          plans.listTasks(ListTasksRequest.newBuilder().setWorkspaceId("ws-conformance").setPageSize(1000).build());
      return List.of(new Field("listed", r.getTasksList().stream().anyMatch(t -> t.getTaskId().equals(TASK))));
    });
    step("export_task", () -> {
      ExportTaskResponse r = plans.exportTask(ExportTaskRequest.newBuilder().setTaskId(TASK).build());
      int n = r.getRevisionsCount();
      String last = n == 0 ? "" : r.getRevisions(n - 1).getRevision().getContent();
      return List.of(
          new Field("revisions", n),
          new Field("revision_count", r.getRevisionCount()),
          new Field("more", r.getMore()),
          new Field("version", r.getHead().getPlan().getVersion()),
          new Field("deleted", r.getHead().getDeleted()),
          new Field("content_sha256", sha(last)));
    });
    step("import_not_operator", () -> {
      ImportTaskStart start =
          ImportTaskStart.newBuilder()
              .setTask(Task.newBuilder().setTaskId(TASK).setWorkspaceId("ws-conformance").setTitle("Conformance"))
              .build();
      ImportTaskResponse r = plans.importTask(List.of(ImportTaskRequest.newBuilder().setStart(start).build()));
      return List.of(new Field("outcome", r.getOutcome().name()));
    });
  }

  private static void changesAndMerge(TaskPlansClient plans) {
    Plan read = plans.getPlan(readTask()).getPlan();
    long since = read.getVersion();
    Function<Long, Step> changesSince =
        version -> () ->
            changesFields(
                plans.getPlanChanges(
                    GetPlanChangesRequest.newBuilder().setTaskId(TASK).setSinceVersion(version).build()));
    step("changes_none", changesSince.apply(since));
    step(
        "other_save",
        () ->
            written(
                plans.savePlan(
                    SavePlanRequest.newBuilder()
                        .setTaskId(TASK)
                        .setContent(read.getContent().replaceFirst("retried fragment", "retried fragment, checked"))
                        .build())));
    step("changes_since", changesSince.apply(since));
    step("merged_edit", () -> {
      WritePlanResponse r =
          plans.editPlan(
              EditPlanRequest.newBuilder()
                  .setTaskId(TASK)
                  .setExpectedVersion(since)
                  .setOldText("Kept across replicas.")
                  .setNewText("Kept across replicas, merged.")
                  .setMerge(true)
                  .build());
      List<Field> pairs = new ArrayList<>(written(r));
      pairs.add(new Field("merged", mergedOver(r.hasMerge(), r.getMerge())));
      pairs.add(new Field("merge_method", r.getMergeMethod().name().replaceFirst("^MERGE_METHOD_", "")));
      return pairs;
    });
    EditPlanRequest conflicting =
        EditPlanRequest.newBuilder()
            .setTaskId(TASK)
            .setExpectedVersion(since)
            .setOldText("retried fragment\n")
            .setNewText("retried twice\n")
            .setMerge(true)
            .build();
    step("merge_conflict", () -> written(plans.editPlan(conflicting)));
    step("merge_conflict_typed", () -> {
      Optional<MergeConflict> conflict = Optional.empty();
      try {
        plans.editPlan(conflicting);
      } catch (TaskPlansException e) {
        conflict = e.mergeConflict();
      }
      return List.of(
          new Field("base_version", orDash(conflict.map(MergeConflict::baseVersion))),
          new Field("current_version", orDash(conflict.map(MergeConflict::currentVersion))),
          new Field("conflict_regions", orDash(conflict.map(MergeConflict::conflictRegions))),
          new Field(
              "conflicts_bytes",
              conflict.map(c -> c.conflicts().getBytes(StandardCharsets.UTF_8).length).orElse(0)));
    });
    step(
        "merge_on_append",
        () ->
            written(
                plans.updatePlan(
                    UpdatePlanRequest.newBuilder()
                        .setTaskId(TASK)
                        .setMode(WriteMode.WRITE_MODE_APPEND)
                        .setContent("x")
                        .setMerge(true)
                        .build())));
    step("changes_ahead", changesSince.apply(100L));
    step("changes_ahead_typed", () -> {
      Optional<HistoryUnavailable> history = Optional.empty();
      try {
        plans.getPlanChanges(GetPlanChangesRequest.newBuilder().setTaskId(TASK).setSinceVersion(100).build());
      } catch (TaskPlansException e) {
        history = e.historyUnavailable();
      }
      return List.of(
          new Field("version", orDash(history.map(HistoryUnavailable::version))),
          new Field("current_version", orDash(history.map(HistoryUnavailable::currentVersion))),
          new Field(
              "oldest_version",
              orDash(
                  history.flatMap(
                      h -> h.oldestVersion().isPresent()
                          ? Optional.of(h.oldestVersion().getAsLong())
                          : Optional.empty()))));
    });
    step("diff_revisions", () -> {
      List<PlanRevision> revisions =
          plans.listPlanRevisions(ListPlanRevisionsRequest.newBuilder().setTaskId(TASK).setPageSize(2).build())
              .getRevisionsList();
      DiffPlanRevisionsResponse r =
          plans.diffPlanRevisions(
              DiffPlanRevisionsRequest.newBuilder()
                  .setTaskId(TASK)
                  .setFromRevisionId(revisions.get(1).getId())
                  .setToRevisionId(revisions.get(0).getId())
                  .build());
      List<Field> pairs = new ArrayList<>();
      pairs.add(new Field("from", r.getFromRevision().getRevisionNumber()));
      pairs.add(new Field("to", r.getToRevision().getRevisionNumber()));
      pairs.add(new Field("to_merged", mergedOver(r.getToRevision().hasMerge(), r.getToRevision().getMerge())));
      pairs.addAll(diffFields(r.getDiff()));
      pairs.add(new Field("diff", r.getDiff().getUnifiedDiff()));
      return pairs;
    });
  }
}
