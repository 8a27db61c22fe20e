// The conformance scenario (clients/conformance/README.md) through the Go client. Prints the canonical
// transcript on stdout. Environment: TASKPLANS_TARGET, TASKPLANS_TASK_ID, TASKPLANS_TOKEN,
// TASKPLANS_TLS_* (optional: CA, CERT, KEY, SERVER_NAME),
// TASKPLANS_EXPIRED_TOKEN.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	taskplans "github.com/taskplans/taskplans/clients/go"
	v1 "github.com/taskplans/taskplans/clients/go/taskplans/v1"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc/status"
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

func step(name string, call func() ([]field, error)) {
	pairs, err := call()
	line := name + ": OK" + fields(pairs)
	if err != nil {
		st, ok := status.FromError(err)
		if !ok {
			fmt.Fprintf(os.Stderr, "%s: not a gRPC error: %v\n", name, err)
			os.Exit(1)
		}
		info := taskplans.ErrorInfo(err)
		reason, message := "-", ""
		var meta []field
		if info != nil {
			reason, message = info.GetReason(), " | "+quote(st.Message())
			keys := make([]string, 0, len(info.GetMetadata()))
			for key := range info.GetMetadata() {
				if key != "request_id" {
					keys = append(keys, key)
				}
			}
			sort.Strings(keys)
			for _, key := range keys {
				meta = append(meta, field{key, info.GetMetadata()[key]})
			}
		}
		for _, v := range taskplans.FieldViolations(err) {
			meta = append(meta, field{"violation." + v.GetField(), v.GetDescription()})
		}
		line = name + ": " + code.Code_name[int32(st.Code())] + " " + reason + fields(meta) + message
	}
	fmt.Println(normalize(line))
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

// watchTake returns the first n messages of a WatchPlan stream, then cancels it.
func watchTake(plans v1.PlanServiceClient, request *v1.WatchPlanRequest, n int) ([]*v1.PlanChange, error) {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := plans.WatchPlan(c, request)
	if err != nil {
		return nil, err
	}
	var got []*v1.PlanChange
	for len(got) < n {
		change, err := stream.Recv()
		if err != nil {
			return nil, err
		}
		got = append(got, change)
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

func main() {
	client, err := taskplans.Dial(target, append(transport(), taskplans.WithToken(mustEnv("TASKPLANS_TOKEN")))...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer client.Close()
	plans, tasks := client.Plans, client.Tasks
	var cancels []context.CancelFunc
	defer func() {
		for _, cancel := range cancels {
			cancel()
		}
	}()
	ctx := func() context.Context { // a 10 s deadline per call
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cancels = append(cancels, cancel)
		return c
	}
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
		got, err := watchTake(plans, &v1.WatchPlanRequest{TaskId: task, IncludeContent: true}, 1)
		if err != nil {
			return nil, err
		}
		c := got[0]
		return []field{{"kind", kindOf(c)}, {"version", c.GetPlan().GetVersion()}, {"content_sha256", sha(c.GetPlan().GetContent())}}, nil
	})
	step("watch_history", func() ([]field, error) {
		return changeList(watchTake(plans, &v1.WatchPlanRequest{TaskId: task, AfterVersion: proto.Uint64(4)}, 4))
	})
	step("watch_ahead", func() ([]field, error) {
		return changeList(watchTake(plans, &v1.WatchPlanRequest{TaskId: task, AfterVersion: proto.Uint64(100)}, 1))
	})
	step("delete_plan_stale", func() ([]field, error) {
		return none(plans.DeletePlan(ctx(), &v1.DeletePlanRequest{TaskId: task, ExpectedVersion: proto.Uint64(1)}))
	})
	step("delete_plan", func() ([]field, error) { return none(plans.DeletePlan(ctx(), &v1.DeletePlanRequest{TaskId: task})) })
	step("watch_after_delete", func() ([]field, error) {
		return changeList(watchTake(plans, &v1.WatchPlanRequest{TaskId: task, AfterVersion: proto.Uint64(7)}, 1))
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
	step("delete_task", func() ([]field, error) { return none(tasks.DeleteTask(ctx(), &v1.DeleteTaskRequest{TaskId: task})) })
	step("get_task_deleted", func() ([]field, error) { return none(tasks.GetTask(ctx(), &v1.GetTaskRequest{TaskId: task})) })
}

// readAs is GetPlan through a connection of its own sending token (none when empty).
func readAs(token string) error {
	options := transport()
	if token != "" {
		options = append(options, taskplans.WithToken(token))
	}
	client, err := taskplans.Dial(target, options...)
	if err != nil {
		return err
	}
	defer client.Close()
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = client.Plans.GetPlan(c, &v1.GetPlanRequest{TaskId: task})
	return err
}
