package taskplans_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	taskplans "github.com/taskplans/taskplans/clients/go"
	v1 "github.com/taskplans/taskplans/clients/go/taskplans/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// These tests call a live server: the repository's test command (test/integration/clients/clients.test.ts)
// starts one and sets TASKPLANS_TEST_TARGET and TASKPLANS_TEST_TOKEN.
func dial(t *testing.T) *taskplans.Client {
	t.Helper()
	target := os.Getenv("TASKPLANS_TEST_TARGET")
	if target == "" {
		t.Fatal("TASKPLANS_TEST_TARGET is not set: these tests need a live server; run them through npm test")
	}
	client, err := taskplans.Dial(target, taskplans.WithToken(os.Getenv("TASKPLANS_TEST_TOKEN")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}

func newTask(t *testing.T, client *taskplans.Client) string {
	t.Helper()
	id := fmt.Sprintf("go-test-%d", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := client.Tasks.CreateTask(ctx, &v1.CreateTaskRequest{TaskId: id, WorkspaceId: "ws-conformance", Title: "go test"}); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestReasonsOfARejectedWrite(t *testing.T) {
	client := dial(t)
	task := newTask(t, client)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	created, err := client.Plans.CreatePlan(ctx, &v1.CreatePlanRequest{TaskId: task, Content: "# Plan\n"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.Plans.UpdatePlan(ctx, &v1.UpdatePlanRequest{
		TaskId: task, Mode: v1.WriteMode_WRITE_MODE_REPLACE, Content: "# Other\n",
		ExpectedVersion: proto.Uint64(created.GetPlan().GetVersion() + 1),
	})
	if got := taskplans.Code(err); got != codes.Aborted {
		t.Fatalf("code = %v, want Aborted (err %v)", got, err)
	}
	if got := taskplans.Reason(err); got != "VERSION_MISMATCH" {
		t.Fatalf("reason = %q, want VERSION_MISMATCH", got)
	}
	if info := taskplans.ErrorInfo(err); info.GetDomain() != taskplans.ErrorDomain {
		t.Fatalf("domain = %q", info.GetDomain())
	}
	if taskplans.NextAction(err) == "" {
		t.Fatal("no next_action")
	}
	plan, err := client.Plans.GetPlan(ctx, &v1.GetPlanRequest{TaskId: task})
	if err != nil || plan.GetPlan().GetContent() != "# Plan\n" || plan.GetPlan().GetVersion() != 1 {
		t.Fatalf("the rejected write changed the plan: %v %v", plan, err)
	}
}

func TestFieldViolations(t *testing.T) {
	client := dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := client.Plans.GetPlan(ctx, &v1.GetPlanRequest{TaskId: ""})
	violations := taskplans.FieldViolations(err)
	if taskplans.Reason(err) != "INVALID_FIELD" || len(violations) != 1 || violations[0].GetField() != "task_id" {
		t.Fatalf("reason %q, violations %v", taskplans.Reason(err), violations)
	}
}

func TestRetriedWriteWithRequestIDWritesOnce(t *testing.T) {
	client := dial(t)
	task := newTask(t, client)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := client.Plans.CreatePlan(ctx, &v1.CreatePlanRequest{TaskId: task, Content: "# Plan\n"}); err != nil {
		t.Fatal(err)
	}
	request := &v1.UpdatePlanRequest{TaskId: task, Mode: v1.WriteMode_WRITE_MODE_APPEND, Content: "- once\n", RequestId: proto.String(task + "-r1")}
	first, err := client.Plans.UpdatePlan(ctx, request)
	if err != nil {
		t.Fatal(err)
	}
	again, err := client.Plans.UpdatePlan(ctx, request)
	if err != nil || again.GetPlan().GetVersion() != first.GetPlan().GetVersion() {
		t.Fatalf("retry answered %v, %v; first %v", again, err, first)
	}
	plan, _ := client.Plans.GetPlan(ctx, &v1.GetPlanRequest{TaskId: task})
	if plan.GetPlan().GetContent() != "# Plan\n\n- once\n" {
		t.Fatalf("content %q", plan.GetPlan().GetContent())
	}
}

func TestDeadlineAndNonGrpcErrors(t *testing.T) {
	client := dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	time.Sleep(time.Millisecond)
	_, err := client.Plans.GetPlan(ctx, &v1.GetPlanRequest{TaskId: "any"})
	if taskplans.Code(err) != codes.DeadlineExceeded || taskplans.Reason(err) != "" {
		t.Fatalf("err %v", err)
	}
	if taskplans.Reason(errors.New("plain")) != "" || taskplans.ErrorInfo(nil) != nil || taskplans.FieldViolations(nil) != nil {
		t.Fatal("a non-gRPC error has no reason")
	}
}

func TestThePerCallTokenWinsOverTheClientsToken(t *testing.T) {
	client := dial(t) // with a valid token
	task := newTask(t, client)
	_, err := client.Plans.GetPlan(taskplans.WithCallToken(context.Background(), "not-a-token"), &v1.GetPlanRequest{TaskId: task})
	if !taskplans.IsAuthError(err) || taskplans.Reason(err) != "TOKEN_INVALID" {
		t.Fatalf("err %v; want TOKEN_INVALID: the server must see the call's token only", err)
	}
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer not-a-token")
	if _, err := client.Plans.GetPlan(ctx, &v1.GetPlanRequest{TaskId: task}); taskplans.Reason(err) != "TOKEN_INVALID" {
		t.Fatalf("err %v; want TOKEN_INVALID from the call's own authorization metadata", err)
	}
}

func TestWatchFollowsAPlan(t *testing.T) {
	client := dial(t)
	task := newTask(t, client)
	if _, err := client.Plans.CreatePlan(context.Background(), &v1.CreatePlanRequest{TaskId: task, Content: "# Plan\n"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w := client.Watch(ctx, task, taskplans.WatchIncludeContent())
	defer w.Close()
	if !w.Next() || w.Change().GetKind() != v1.PlanChangeKind_PLAN_CHANGE_KIND_SNAPSHOT || w.Change().GetPlan().GetContent() != "# Plan\n" {
		t.Fatalf("first change %v, err %v; want the snapshot with content", w.Change(), w.Err())
	}
	if _, err := client.Plans.UpdatePlan(ctx, &v1.UpdatePlanRequest{TaskId: task, Mode: v1.WriteMode_WRITE_MODE_APPEND, Content: "- more\n"}); err != nil {
		t.Fatal(err)
	}
	if !w.Next() || w.Change().GetKind() != v1.PlanChangeKind_PLAN_CHANGE_KIND_UPDATED || w.Change().GetPlan().GetVersion() != 2 {
		t.Fatalf("next change %v, err %v; want UPDATED version 2", w.Change(), w.Err())
	}
	w.Close()
	if w.Next() || w.Err() != nil {
		t.Fatalf("after Close: Err %v", w.Err())
	}
}

func TestChangesSinceAVersionAndAMergedEdit(t *testing.T) {
	client := dial(t)
	task := newTask(t, client)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	created, err := client.Plans.CreatePlan(ctx, &v1.CreatePlanRequest{TaskId: task, Content: "# Plan\n\n- [ ] a\n- b\n- c\n- [ ] d\n"})
	if err != nil {
		t.Fatal(err)
	}
	read := created.GetPlan().GetVersion()
	if _, err := client.Plans.SavePlan(ctx, &v1.SavePlanRequest{TaskId: task, Content: "# Plan\n\n- [x] a\n- b\n- c\n- [ ] d\n"}); err != nil {
		t.Fatal(err)
	}
	changes, err := client.Plans.GetPlanChanges(ctx, &v1.GetPlanChangesRequest{TaskId: task, SinceVersion: proto.Uint64(read)})
	if err != nil || changes.GetPlan().GetVersion() != read+1 || !strings.Contains(changes.GetDiff().GetUnifiedDiff(), "\n+- [x] a\n") ||
		len(changes.GetChanges()) != 1 || changes.GetPlan().GetContent() != "" {
		t.Fatalf("GetPlanChanges = %v, %v", changes, err)
	}
	merged, err := client.Plans.EditPlan(ctx, &v1.EditPlanRequest{TaskId: task, ExpectedVersion: proto.Uint64(read),
		OldText: "- [ ] d", NewText: "- [x] d", Merge: proto.Bool(true)})
	if err != nil || merged.GetMerge().GetFromVersion() != read || merged.GetMerge().GetToVersion() != read+1 {
		t.Fatalf("merged EditPlan = %v, %v", merged, err)
	}
	_, err = client.Plans.EditPlan(ctx, &v1.EditPlanRequest{TaskId: task, ExpectedVersion: proto.Uint64(read),
		OldText: "- [ ] a", NewText: "- [ ] a, again", Merge: proto.Bool(true)})
	conflict, ok := taskplans.MergeConflictOf(err)
	if !ok || !taskplans.IsMergeConflict(err) || conflict.BaseVersion != read || conflict.CurrentVersion != read+2 ||
		!strings.Contains(conflict.Conflicts, "<<<<<<< yours") {
		t.Fatalf("conflicting EditPlan: %v (%+v)", err, conflict)
	}
	_, err = client.Plans.GetPlanChanges(ctx, &v1.GetPlanChangesRequest{TaskId: task, SinceVersion: proto.Uint64(100)})
	if history, ok := taskplans.HistoryUnavailableOf(err); !ok || history.Version != 100 || history.CurrentVersion != read+2 {
		t.Fatalf("GetPlanChanges ahead: %v (%+v)", err, history)
	}
	plan, err := client.Plans.GetPlan(ctx, &v1.GetPlanRequest{TaskId: task})
	if err != nil || plan.GetPlan().GetContent() != "# Plan\n\n- [x] a\n- b\n- c\n- [x] d\n" {
		t.Fatalf("the plan after the merge: %v, %v", plan, err)
	}
}
