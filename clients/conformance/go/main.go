// The conformance scenario (clients/conformance/README.md) through the Go client. Prints the canonical
// transcript on stdout, and reads the lines of the resilience steps from stdin. Environment:
// TASKPLANS_TARGET, TASKPLANS_FAILOVER_TARGET, TASKPLANS_TASK_ID, TASKPLANS_TOKEN,
// TASKPLANS_EXPIRED_TOKEN, TASKPLANS_TLS_* (optional: CA, CERT, KEY, SERVER_NAME).
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	taskplans "github.com/taskplans/taskplans/clients/go"
	v1 "github.com/taskplans/taskplans/clients/go/taskplans/v1"
	"google.golang.org/protobuf/proto"
)

type field struct {
	key   string
	value any
}

var (
	task   = mustEnv("TASKPLANS_TASK_ID")
	target = mustEnv("TASKPLANS_TARGET")
	uuidRe = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
)

// transport is TLS when TASKPLANS_TLS_CA is set (mTLS with TASKPLANS_TLS_CERT and TASKPLANS_TLS_KEY),
// else plaintext.
func transport() []taskplans.Option {
	if os.Getenv("TASKPLANS_TLS_CA") == "" {
		return nil
	}
	return []taskplans.Option{taskplans.WithTLS(taskplans.TLS{
		CAFile:     os.Getenv("TASKPLANS_TLS_CA"),
		CertFile:   os.Getenv("TASKPLANS_TLS_CERT"),
		KeyFile:    os.Getenv("TASKPLANS_TLS_KEY"),
		ServerName: os.Getenv("TASKPLANS_TLS_SERVER_NAME"),
	})}
}

func mustEnv(name string) string {
	value := os.Getenv(name)
	if value == "" {
		fmt.Fprintf(os.Stderr, "%s is not set\n", name)
		os.Exit(2)
	}
	return value
}

func quote(text string) string {
	text = strings.ReplaceAll(text, `\`, `\\`)
	text = strings.ReplaceAll(text, `"`, `\"`)
	return `"` + strings.ReplaceAll(text, "\n", `\n`) + `"`
}

func show(value any) string {
	switch v := value.(type) {
	case string:
		return quote(v)
	case bool:
		return strconv.FormatBool(v)
	default:
		return fmt.Sprint(v)
	}
}

func fields(pairs []field) string {
	var b strings.Builder
	for _, p := range pairs {
		b.WriteString(" " + p.key + "=" + show(p.value))
	}
	return b.String()
}

func normalize(line string) string {
	return uuidRe.ReplaceAllString(strings.ReplaceAll(line, task, "<task>"), "<uuid>")
}

// step prints one step's line: its fields, or its error read from the client's typed error.
func step(name string, call func() ([]field, error)) {
	pairs, err := call()
	line := name + ": OK" + fields(pairs)
	if err != nil {
		var e *taskplans.Error
		if !errors.As(err, &e) {
			fmt.Fprintf(os.Stderr, "%s: not a *taskplans.Error: %v\n", name, err)
			os.Exit(1)
		}
		line = name + ": " + errorLine(e)
	}
	fmt.Println(normalize(line))
}

// errorLine is `CODE REASON metadata... violations... | "message"`; `CODE -` plus violations when the
// error carries no ErrorInfo (the client library raised it; its wording differs per language).
func errorLine(e *taskplans.Error) string {
	reason, message := "-", ""
	var meta []field
	if e.Metadata != nil { // the error carries an ErrorInfo
		reason, message = e.Reason, " | "+quote(e.Message)
		keys := make([]string, 0, len(e.Metadata))
		for key := range e.Metadata {
			if key != "request_id" {
				keys = append(keys, key)
			}
		}
		sort.Strings(keys)
		for _, key := range keys {
			meta = append(meta, field{key, e.Metadata[key]})
		}
	}
	for _, v := range e.FieldViolations {
		meta = append(meta, field{"violation." + v.Field, v.Description})
	}
	return e.CodeName() + " " + reason + fields(meta) + message
}

func written(r *v1.WritePlanResponse, err error) ([]field, error) {
	if err != nil {
		return nil, err
	}
	return []field{
		{"version", r.GetPlan().GetVersion()},
		{"revision", r.GetRevision().GetNumber()},
		{"coalesced", r.GetRevision().GetCoalesced()},
		{"bytes", r.GetPlan().GetContentBytes()},
	}, nil
}

func none[T any](_ T, err error) ([]field, error) { return nil, err }

func revisionList(revisions []*v1.PlanRevision, nextPageToken string) []field {
	var numbers, sizes, reverts []string
	for _, r := range revisions {
		numbers = append(numbers, strconv.FormatUint(r.GetRevisionNumber(), 10))
		sizes = append(sizes, strconv.FormatUint(r.GetContentBytes(), 10))
		revert := "no"
		if r.RevertOfRevisionId != nil && r.GetRevertOfRevisionId() != "" {
			revert = "yes"
		}
		reverts = append(reverts, revert)
	}
	return []field{
		{"count", len(revisions)},
		{"numbers", strings.Join(numbers, ",")},
		{"bytes", strings.Join(sizes, ",")},
		{"reverts", strings.Join(reverts, ",")},
		{"next_page_token", nextPageToken},
	}
}

// watchTake returns the first n changes of a Watch, then closes it.
func watchTake(client *taskplans.Client, n int, options ...taskplans.WatchOption) ([]*v1.PlanChange, error) {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w := client.Watch(c, task, options...)
	defer w.Close()
	var got []*v1.PlanChange
	for len(got) < n && w.Next() {
		got = append(got, w.Change())
	}
	if len(got) < n {
		if err := w.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("the watch ended after %d changes without an error", len(got))
	}
	return got, nil
}

func kindOf(c *v1.PlanChange) string {
	return strings.TrimPrefix(c.GetKind().String(), "PLAN_CHANGE_KIND_")
}

func changeList(changes []*v1.PlanChange, err error) ([]field, error) {
	if err != nil {
		return nil, err
	}
	var kinds, versions, revisions []string
	for _, c := range changes {
		kinds = append(kinds, kindOf(c))
		versions = append(versions, strconv.FormatUint(c.GetPlan().GetVersion(), 10))
		revision := "-"
		if c.Revision != nil {
			revision = strconv.FormatUint(c.GetRevision().GetNumber(), 10)
		}
		revisions = append(revisions, revision)
	}
	return []field{
		{"kinds", strings.Join(kinds, ",")},
		{"versions", strings.Join(versions, ",")},
		{"revisions", strings.Join(revisions, ",")},
	}, nil
}

func sha(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// Over 2,000 characters, so that the reduction guard judges a replacement of it.
var initialPlan = "# Plan\n- step one\n- step two\n\n## Notes\n" +
	strings.Repeat("- a note that keeps this plan long enough for the reduction guard\n", 40)

// dial is a client of the package's defaults (retries on) with a default timeout of 10 s.
func dial(to string, options ...taskplans.Option) *taskplans.Client {
	options = append(append(transport(), taskplans.WithDefaultTimeout(10*time.Second)), options...)
	client, err := taskplans.Dial(to, options...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return client
}

func main() {
	client := dial(target, taskplans.WithToken(mustEnv("TASKPLANS_TOKEN")))
	defer client.Close()
	plans, tasks := client.Plans, client.Tasks
	ctx := context.Background // the client's default timeout is each call's deadline
	appendMode, replaceMode := v1.WriteMode_WRITE_MODE_APPEND, v1.WriteMode_WRITE_MODE_REPLACE
	const workspace = "ws-conformance"

	step("create_task", func() ([]field, error) {
		r, err := tasks.CreateTask(ctx(), &v1.CreateTaskRequest{TaskId: task, WorkspaceId: workspace, Title: "Conformance"})
		return []field{{"task_id", r.GetTask().GetTaskId()}, {"workspace_id", r.GetTask().GetWorkspaceId()}, {"title", r.GetTask().GetTitle()}}, err
	})
	step("create_task_again", func() ([]field, error) {
		return none(tasks.CreateTask(ctx(), &v1.CreateTaskRequest{TaskId: task, WorkspaceId: workspace, Title: "Conformance"}))
	})
	step("create_task_elsewhere", func() ([]field, error) {
		return none(tasks.CreateTask(ctx(), &v1.CreateTaskRequest{TaskId: task + "-elsewhere", WorkspaceId: "ws-elsewhere", Title: "Elsewhere"}))
	})
	step("get_task", func() ([]field, error) {
		r, err := tasks.GetTask(ctx(), &v1.GetTaskRequest{TaskId: task})
		return []field{{"task_id", r.GetTask().GetTaskId()}, {"workspace_id", r.GetTask().GetWorkspaceId()}}, err
	})
	step("get_plan_none", func() ([]field, error) { return none(plans.GetPlan(ctx(), &v1.GetPlanRequest{TaskId: task})) })
	step("invalid_task_id", func() ([]field, error) { return none(plans.GetPlan(ctx(), &v1.GetPlanRequest{TaskId: ""})) })
	step("create_plan", func() ([]field, error) {
		return written(plans.CreatePlan(ctx(), &v1.CreatePlanRequest{TaskId: task, Title: proto.String("Conformance plan"), Content: initialPlan}))
	})
	step("create_plan_again", func() ([]field, error) {
		return none(plans.CreatePlan(ctx(), &v1.CreatePlanRequest{TaskId: task, Content: "# Other\n"}))
	})
	step("append", func() ([]field, error) {
		return written(plans.UpdatePlan(ctx(), &v1.UpdatePlanRequest{TaskId: task, Mode: appendMode, Content: "\n## Findings\n- it works\n"}))
	})
	step("get_plan", func() ([]field, error) {
		r, err := plans.GetPlan(ctx(), &v1.GetPlanRequest{TaskId: task})
		p := r.GetPlan()
		return []field{
			{"version", p.GetVersion()}, {"title", p.GetTitle()}, {"bytes", p.GetContentBytes()}, {"chars", p.GetContentChars()},
			{"latest_revision", p.GetLatestRevisionNumber()}, {"content_sha256", sha(p.GetContent())},
		}, err
	})
	update := func(r *v1.UpdatePlanRequest) func() ([]field, error) {
		return func() ([]field, error) { r.TaskId = task; return none(plans.UpdatePlan(ctx(), r)) }
	}
	step("stale_replace", update(&v1.UpdatePlanRequest{Mode: replaceMode, ExpectedVersion: proto.Uint64(1), Content: "# Plan\n- rewritten\n"}))
	step("replace_without_version", update(&v1.UpdatePlanRequest{Mode: replaceMode, Content: "# Plan\n"}))
	step("replace_empty", update(&v1.UpdatePlanRequest{Mode: replaceMode, ExpectedVersion: proto.Uint64(2), Content: ""}))
	step("replace_shrinking", update(&v1.UpdatePlanRequest{Mode: replaceMode, ExpectedVersion: proto.Uint64(2), Content: "# P\n"}))
	step("unknown_write_mode", update(&v1.UpdatePlanRequest{Mode: v1.WriteMode(7), Content: "x"}))
	step("append_blank", update(&v1.UpdatePlanRequest{Mode: appendMode, Content: " \n\n"}))
	step("append_acknowledging_reduction", update(&v1.UpdatePlanRequest{Mode: appendMode, Content: "- x\n", AcknowledgeReduction: true}))
	step("append_too_large", update(&v1.UpdatePlanRequest{Mode: appendMode, Content: strings.Repeat("a", 262_144)}))
	edit := func(oldText, newText string) ([]field, error) {
		return written(plans.EditPlan(ctx(), &v1.EditPlanRequest{TaskId: task, ExpectedVersion: proto.Uint64(2), OldText: oldText, NewText: newText}))
	}
	step("edit_absent", func() ([]field, error) { return edit("step three", "x") })
	step("edit_not_unique", func() ([]field, error) { return edit("step", "x") })
	step("edit_without_text", func() ([]field, error) { return edit("", "x") })
	step("edit", func() ([]field, error) { return edit("step one", "step one (done)") })
	requestID := task + "-retry"
	retried := func(content string) ([]field, error) {
		return written(plans.UpdatePlan(ctx(), &v1.UpdatePlanRequest{TaskId: task, Mode: appendMode, Content: content, RequestId: &requestID}))
	}
	step("append_with_request_id", func() ([]field, error) { return retried("- retried\n") })
	step("append_retried", func() ([]field, error) { return retried("- retried\n") })
	step("request_id_reused", func() ([]field, error) { return retried("- other\n") })
	step("partial_read", func() ([]field, error) {
		r, err := plans.GetPlan(ctx(), &v1.GetPlanRequest{TaskId: task, Offset: proto.Uint32(2), Limit: proto.Uint32(4)})
		next := int64(-1)
		if r.NextOffset != nil {
			next = int64(r.GetNextOffset())
		}
		return []field{
			{"content", r.GetPlan().GetContent()}, {"total_chars", r.GetTotalChars()}, {"total_bytes", r.GetTotalBytes()},
			{"next_offset", next}, {"has_more", r.GetHasMore()},
		}, err
	})
	step("offset_past_end", func() ([]field, error) {
		return none(plans.GetPlan(ctx(), &v1.GetPlanRequest{TaskId: task, Offset: proto.Uint32(100_000)}))
	})
	step("get_revision_missing", func() ([]field, error) {
		return none(plans.GetPlanRevision(ctx(), &v1.GetPlanRevisionRequest{TaskId: task, RevisionId: "00000000-0000-4000-8000-000000000000"}))
	})
	var firstID, firstVersion string
	step("list_revisions", func() ([]field, error) {
		r, err := plans.ListPlanRevisions(ctx(), &v1.ListPlanRevisionsRequest{TaskId: task})
		if n := len(r.GetRevisions()); n > 0 {
			firstID = r.GetRevisions()[n-1].GetId()
		}
		return revisionList(r.GetRevisions(), r.GetNextPageToken()), err
	})
	step("get_revision", func() ([]field, error) {
		r, err := plans.GetPlanRevision(ctx(), &v1.GetPlanRevisionRequest{TaskId: task, RevisionId: firstID})
		firstVersion = r.GetRevision().GetRevisionVersion()
		return []field{
			{"number", r.GetRevision().GetRevisionNumber()}, {"bytes", r.GetRevision().GetContentBytes()},
			{"content_sha256", sha(r.GetRevision().GetContent())},
		}, err
	})
	step("revert", func() ([]field, error) {
		return written(plans.RevertPlan(ctx(), &v1.RevertPlanRequest{TaskId: task, RevisionId: firstID}))
	})
	step("save", func() ([]field, error) {
		return written(plans.SavePlan(ctx(), &v1.SavePlanRequest{TaskId: task, Content: "# Saved by an editor\n"}))
	})
	restore := func(revisionVersion string) ([]field, error) {
		r, err := plans.RestorePlanRevision(ctx(), &v1.RestorePlanRevisionRequest{
			TaskId: task, RevisionId: firstID, ExpectedVersion: proto.Uint64(6), ExpectedRevisionVersion: revisionVersion,
		})
		return []field{{"status", r.GetStatus().String()}, {"version", r.GetPlan().GetVersion()}, {"revision", r.GetRevision().GetNumber()}}, err
	}
	step("restore_without_revision_version", func() ([]field, error) { return restore("") })
	step("restore_changed_revision", func() ([]field, error) { return restore("stale") })
	step("restore", func() ([]field, error) { return restore(firstVersion) })
	step("list_revisions_page", func() ([]field, error) {
		r, err := plans.ListPlanRevisions(ctx(), &v1.ListPlanRevisionsRequest{TaskId: task, PageSize: 2})
		token := ""
		if r.GetNextPageToken() != "" {
			token = "<token>"
		}
		return revisionList(r.GetRevisions(), token), err
	})
	step("mark_implementation_started", func() ([]field, error) {
		r, err := plans.MarkImplementationStarted(ctx(), &v1.MarkImplementationStartedRequest{TaskId: task, SessionId: "session-1", Actor: "conformance"})
		p := r.GetPlan()
		return []field{{"version", p.GetVersion()}, {"started_by", p.GetImplementationStartedBy()}, {"session", p.GetImplementationStartedSessionId()}}, err
	})
	step("watch_snapshot", func() ([]field, error) {
		got, err := watchTake(client, 1, taskplans.WatchIncludeContent())
		if err != nil {
			return nil, err
		}
		c := got[0]
		return []field{{"kind", kindOf(c)}, {"version", c.GetPlan().GetVersion()}, {"content_sha256", sha(c.GetPlan().GetContent())}}, nil
	})
	step("watch_history", func() ([]field, error) {
		return changeList(watchTake(client, 4, taskplans.WatchAfterVersion(4)))
	})
	step("watch_ahead", func() ([]field, error) {
		return changeList(watchTake(client, 1, taskplans.WatchAfterVersion(100)))
	})
	step("delete_plan_stale", func() ([]field, error) {
		return none(plans.DeletePlan(ctx(), &v1.DeletePlanRequest{TaskId: task, ExpectedVersion: proto.Uint64(1)}))
	})
	step("delete_plan", func() ([]field, error) { return none(plans.DeletePlan(ctx(), &v1.DeletePlanRequest{TaskId: task})) })
	step("watch_after_delete", func() ([]field, error) {
		return changeList(watchTake(client, 1, taskplans.WatchAfterVersion(7)))
	})
	step("get_plan_deleted", func() ([]field, error) { return none(plans.GetPlan(ctx(), &v1.GetPlanRequest{TaskId: task})) })
	step("token_missing", func() ([]field, error) { return nil, readAs("") })
	step("token_invalid", func() ([]field, error) { return nil, readAs("not-a-token") })
	step("token_expired", func() ([]field, error) { return nil, readAs(mustEnv("TASKPLANS_EXPIRED_TOKEN")) })
	step("deadline_exceeded", func() ([]field, error) {
		past, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Millisecond))
		defer cancel()
		return none(plans.GetPlan(past, &v1.GetPlanRequest{TaskId: task}))
	})
	resilience(client)
	changesAndMerge(client)
	exportAndImport(client)
	step("delete_task", func() ([]field, error) { return none(tasks.DeleteTask(ctx(), &v1.DeleteTaskRequest{TaskId: task})) })
	step("get_task_deleted", func() ([]field, error) { return none(tasks.GetTask(ctx(), &v1.GetTaskRequest{TaskId: task})) })
}

// readAs is GetPlan through a connection of its own sending token (none when empty).
func readAs(token string) error {
	var options []taskplans.Option
	if token != "" {
		options = append(options, taskplans.WithToken(token))
	}
	client := dial(target, options...)
	defer client.Close()
	_, err := client.Plans.GetPlan(context.Background(), &v1.GetPlanRequest{TaskId: task})
	return err
}

// stdin holds the lines the test answers the resilience steps with.
var stdin = bufio.NewReader(os.Stdin)

// readLine waits for the test's answer to the line just printed.
func readLine() string {
	line, err := stdin.ReadString('\n')
	if err != nil {
		fmt.Fprintf(os.Stderr, "stdin ended before the test answered: %v\n", err)
		os.Exit(2)
	}
	return strings.TrimRight(line, "\r\n")
}

func read(client *taskplans.Client, c context.Context) (*v1.Plan, error) {
	r, err := client.Plans.GetPlan(c, &v1.GetPlanRequest{TaskId: task})
	return r.GetPlan(), err
}

func changeFields(w *taskplans.Watch) ([]field, error) {
	if !w.Next() {
		if err := w.Err(); err != nil {
			return nil, err
		}
		return nil, errors.New("the watch ended without a change")
	}
	return []field{{"kind", kindOf(w.Change())}, {"version", w.Change().GetPlan().GetVersion()}}, nil
}

// resilience runs the resilience steps (clients/conformance/README.md): a failover replica the test
// kills and restarts, a watch that resumes, a token provider and a per-call token.
func resilience(client *taskplans.Client) {
	token := mustEnv("TASKPLANS_TOKEN")
	failover := dial(mustEnv("TASKPLANS_FAILOVER_TARGET"), taskplans.WithToken(token))
	defer failover.Close()
	bg := context.Background()
	const fragment = "retried fragment"

	step("recreate_plan", func() ([]field, error) {
		return written(client.Plans.CreatePlan(bg, &v1.CreatePlanRequest{
			TaskId: task, Title: proto.String("Resilience"), Content: "# Resilience\n\nKept across replicas.",
		}))
	})
	step("failover_read", func() ([]field, error) {
		plan, err := read(failover, bg)
		return []field{{"version", plan.GetVersion()}}, err
	})
	readLine() // the test now holds back the replica's answers
	step("retried_append", func() ([]field, error) {
		// No request_id: the package sets one, the same on the attempt after the replica's restart.
		return written(failover.Plans.UpdatePlan(bg, &v1.UpdatePlanRequest{TaskId: task, Mode: v1.WriteMode_WRITE_MODE_APPEND, Content: fragment}))
	})
	step("retried_append_applied", func() ([]field, error) {
		plan, err := read(client, bg)
		return []field{{"version", plan.GetVersion()}, {"occurrences", strings.Count(plan.GetContent(), fragment)}}, err
	})

	watching, stop := context.WithCancel(bg)
	defer stop()
	w := failover.Watch(watching, task)
	defer w.Close()
	step("watch_resume_open", func() ([]field, error) { return changeFields(w) })
	readLine() // the test stops the replica (WATCH_DRAINING) and restarts it
	step("watch_resume_append", func() ([]field, error) {
		return written(failover.Plans.UpdatePlan(bg, &v1.UpdatePlanRequest{TaskId: task, Mode: v1.WriteMode_WRITE_MODE_APPEND, Content: "after the restart"}))
	})
	step("watch_resumed", func() ([]field, error) { return changeFields(w) })
	step("watch_cancelled", func() ([]field, error) {
		_ = w.Close()
		if w.Next() {
			return nil, errors.New("the watch went on after Close")
		}
		return nil, w.Err()
	})
	step("watch_expired", func() ([]field, error) {
		_, err := watchTake(client, 1, taskplans.WatchAfterVersion(100))
		return nil, err
	})

	answer := strings.Fields(readLine()) // "<token> <exp>"
	if len(answer) != 2 {
		fmt.Fprintf(os.Stderr, "expected \"<token> <exp>\" on stdin, got %q\n", answer)
		os.Exit(2)
	}
	short := answer[0]
	exp, err := strconv.ParseInt(answer[1], 10, 64)
	if err != nil {
		fmt.Fprintf(os.Stderr, "expiry %q: %v\n", answer[1], err)
		os.Exit(2)
	}
	expiresAt := time.Unix(exp, 0)
	calls, last := 0, ""
	refreshing := dial(target, taskplans.WithTokenProvider(func(context.Context) (string, error) {
		calls++
		if time.Now().Before(expiresAt.Add(-time.Second)) {
			last = "short"
			return short, nil
		}
		last = "refreshed"
		return token, nil
	}))
	defer refreshing.Close()
	readThrough := func(c context.Context) ([]field, error) {
		plan, err := read(refreshing, c)
		return []field{{"version", plan.GetVersion()}, {"provider_calls", calls}, {"token", last}}, err
	}
	step("token_provider_first", func() ([]field, error) { return readThrough(bg) })
	time.Sleep(time.Until(expiresAt.Add(time.Second)))
	step("token_override_expired", func() ([]field, error) { return readThrough(taskplans.WithCallToken(bg, short)) })
	step("token_provider_refreshed", func() ([]field, error) { return readThrough(bg) })
}

func diffFields(d *v1.PlanDiff) []field {
	return []field{
		{"old_bytes", d.GetOldBytes()}, {"new_bytes", d.GetNewBytes()}, {"diff_bytes", d.GetDiffBytes()},
		{"lines_added", d.GetLinesAdded()}, {"lines_removed", d.GetLinesRemoved()},
	}
}

func changesFields(r *v1.GetPlanChangesResponse, err error) ([]field, error) {
	if err != nil {
		return nil, err
	}
	changes := make([]string, 0, len(r.GetChanges()))
	for _, c := range r.GetChanges() {
		kind := strings.TrimPrefix(c.GetKind().String(), "PLAN_CHANGE_KIND_")
		author := strings.TrimPrefix(c.GetAuthor().GetKind().String(), "AUTHOR_KIND_")
		changes = append(changes, fmt.Sprintf("%d:%s:%s", c.GetVersion(), kind, author))
	}
	pairs := []field{{"version", r.GetPlan().GetVersion()}, {"since_version", r.GetSinceVersion()}}
	pairs = append(pairs, diffFields(r.GetDiff())...)
	return append(pairs, field{"changes", strings.Join(changes, ",")}, field{"changes_truncated", r.GetChangesTruncated()},
		field{"diff", r.GetDiff().GetUnifiedDiff()}), nil
}

// orDash is n, or "-" when absent.
func orDash(n uint64, present bool) any {
	if !present {
		return "-"
	}
	return n
}

func mergedOver(m *v1.MergeMarker) string {
	if m == nil {
		return "-..-"
	}
	return fmt.Sprintf("%d..%d", m.GetFromVersion(), m.GetToVersion())
}

// changesAndMerge runs the steps of issue 44: changes since a version, a merged edit, a conflict, the
// refusals, a revision diff.
// exportAndImport: the task listed, exported in one page, and an import refused to a token that is
// not an operator's (issue 46).
func exportAndImport(client *taskplans.Client) {
	tasks, bg := client.Tasks, context.Background()
	step("list_tasks", func() ([]field, error) {
		r, err := tasks.ListTasks(bg, &v1.ListTasksRequest{WorkspaceId: "ws-conformance", PageSize: 1000})
		listed := false
		for _, t := range r.GetTasks() {
			listed = listed || t.GetTaskId() == task
		}
		return []field{{"listed", listed}}, err
	})
	step("export_task", func() ([]field, error) {
		r, err := tasks.ExportTask(bg, &v1.ExportTaskRequest{TaskId: task})
		revisions, last := r.GetRevisions(), ""
		if len(revisions) > 0 {
			last = revisions[len(revisions)-1].GetRevision().GetContent()
		}
		return []field{{"revisions", len(revisions)}, {"revision_count", r.GetRevisionCount()}, {"more", r.GetMore()},
			{"version", r.GetHead().GetPlan().GetVersion()}, {"deleted", r.GetHead().GetDeleted()}, {"content_sha256", sha(last)}}, err
	})
	step("import_not_operator", func() ([]field, error) {
		// A client stream has no default deadline: the call gives its own.
		deadline, cancel := context.WithTimeout(bg, 10*time.Second)
		defer cancel()
		stream, err := tasks.ImportTask(deadline)
		if err != nil {
			return nil, err
		}
		start := &v1.ImportTaskStart{Task: &v1.Task{TaskId: task, WorkspaceId: "ws-conformance", Title: "Conformance"}}
		// A refusal may close the stream before the message is taken (io.EOF): the answer says why.
		_ = stream.Send(&v1.ImportTaskRequest{Part: &v1.ImportTaskRequest_Start{Start: start}})
		r, err := stream.CloseAndRecv()
		return []field{{"outcome", r.GetOutcome().String()}}, err
	})
}

func changesAndMerge(client *taskplans.Client) {
	plans, bg := client.Plans, context.Background()
	read, err := plans.GetPlan(bg, &v1.GetPlanRequest{TaskId: task})
	if err != nil {
		fmt.Fprintf(os.Stderr, "changes: %v\n", err)
		os.Exit(1)
	}
	since := read.GetPlan().GetVersion()
	changesSince := func(version uint64) ([]field, error) {
		return changesFields(plans.GetPlanChanges(bg, &v1.GetPlanChangesRequest{TaskId: task, SinceVersion: proto.Uint64(version)}))
	}
	step("changes_none", func() ([]field, error) { return changesSince(since) })
	step("other_save", func() ([]field, error) {
		content := strings.Replace(read.GetPlan().GetContent(), "retried fragment", "retried fragment, checked", 1)
		return written(plans.SavePlan(bg, &v1.SavePlanRequest{TaskId: task, Content: content}))
	})
	step("changes_since", func() ([]field, error) { return changesSince(since) })
	step("merged_edit", func() ([]field, error) {
		r, err := plans.EditPlan(bg, &v1.EditPlanRequest{TaskId: task, ExpectedVersion: proto.Uint64(since),
			OldText: "Kept across replicas.", NewText: "Kept across replicas, merged.", Merge: proto.Bool(true)})
		pairs, err := written(r, err)
		return append(pairs, field{"merged", mergedOver(r.GetMerge())},
			field{"merge_method", strings.TrimPrefix(r.GetMergeMethod().String(), "MERGE_METHOD_")}), err
	})
	conflicting := func() (*v1.WritePlanResponse, error) {
		return plans.EditPlan(bg, &v1.EditPlanRequest{TaskId: task, ExpectedVersion: proto.Uint64(since),
			OldText: "retried fragment\n", NewText: "retried twice\n", Merge: proto.Bool(true)})
	}
	step("merge_conflict", func() ([]field, error) { return written(conflicting()) })
	step("merge_conflict_typed", func() ([]field, error) {
		_, err := conflicting()
		c, ok := taskplans.MergeConflictOf(err)
		return []field{{"base_version", orDash(c.BaseVersion, ok)}, {"current_version", orDash(c.CurrentVersion, ok)},
			{"conflict_regions", orDash(uint64(c.ConflictRegions), ok)}, {"conflicts_bytes", len(c.Conflicts)}}, nil
	})
	step("merge_on_append", func() ([]field, error) {
		return written(plans.UpdatePlan(bg, &v1.UpdatePlanRequest{TaskId: task, Mode: v1.WriteMode_WRITE_MODE_APPEND,
			Content: "x", Merge: proto.Bool(true)}))
	})
	step("changes_ahead", func() ([]field, error) { return changesSince(100) })
	step("changes_ahead_typed", func() ([]field, error) {
		_, err := plans.GetPlanChanges(bg, &v1.GetPlanChangesRequest{TaskId: task, SinceVersion: proto.Uint64(100)})
		h, ok := taskplans.HistoryUnavailableOf(err)
		return []field{{"version", orDash(h.Version, ok)}, {"current_version", orDash(h.CurrentVersion, ok)},
			{"oldest_version", orDash(h.OldestVersion, ok && h.HasOldestVersion)}}, nil
	})
	step("diff_revisions", func() ([]field, error) {
		page, err := plans.ListPlanRevisions(bg, &v1.ListPlanRevisionsRequest{TaskId: task, PageSize: 2})
		if err != nil {
			return nil, err
		}
		revisions := page.GetRevisions()
		if len(revisions) < 2 {
			return nil, fmt.Errorf("%d revisions", len(revisions))
		}
		r, err := plans.DiffPlanRevisions(bg, &v1.DiffPlanRevisionsRequest{TaskId: task,
			FromRevisionId: revisions[1].GetId(), ToRevisionId: revisions[0].GetId()})
		if err != nil {
			return nil, err
		}
		pairs := []field{{"from", r.GetFromRevision().GetRevisionNumber()}, {"to", r.GetToRevision().GetRevisionNumber()},
			{"to_merged", mergedOver(r.GetToRevision().GetMerge())}}
		pairs = append(pairs, diffFields(r.GetDiff())...)
		return append(pairs, field{"diff", r.GetDiff().GetUnifiedDiff()}), nil
	})
}
