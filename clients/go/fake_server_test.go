package taskplans_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	taskplans "github.com/taskplans/taskplans/clients/go"
	v1 "github.com/taskplans/taskplans/clients/go/taskplans/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"
)

// A scripted fake server for the client's own logic (retries, deadlines, tokens, watch resume): a
// real gRPC server on 127.0.0.1:0 whose PlanService and TaskService answer each attempt of a method
// with the next entry of its script (the last one repeats; nil is a canned success) and record what
// every attempt carried.

// hang makes a scripted attempt wait until its call's context ends.
var hang = status.Error(codes.Internal, "scripted: hang")

// attempt is what one call attempt carried.
type attempt struct {
	method        string
	requestID     *string
	authorization []string
	at            time.Time
	deadline      time.Time // zero: none
	afterVersion  *uint64   // WatchPlan only
	content       bool      // WatchPlan only
}

// watchScript serves one opening of WatchPlan.
type watchScript func(request *v1.WatchPlanRequest, stream grpc.ServerStreamingServer[v1.PlanChange]) error

type fake struct {
	v1.UnimplementedPlanServiceServer
	v1.UnimplementedTaskServiceServer

	mu       sync.Mutex
	scripts  map[string][]error
	watches  []watchScript
	attempts []attempt
}

func newFake() *fake { return &fake{scripts: map[string][]error{}} }

// script sets the answers of method ("GetPlan") to its successive attempts.
func (f *fake) script(method string, answers ...error) *fake {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scripts[method] = answers
	return f
}

func (f *fake) record(ctx context.Context, method string, requestID *string) (int, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	a := attempt{method: method, requestID: requestID, authorization: md.Get("authorization"), at: time.Now()}
	if deadline, ok := ctx.Deadline(); ok {
		a.deadline = deadline
	}
	f.mu.Lock()
	n := 0
	for _, earlier := range f.attempts {
		if earlier.method == method {
			n++
		}
	}
	f.attempts = append(f.attempts, a)
	answers := f.scripts[method]
	f.mu.Unlock()
	if len(answers) == 0 {
		return n, nil
	}
	err := answers[min(n, len(answers)-1)]
	if err == hang {
		<-ctx.Done()
		return n, status.FromContextError(ctx.Err()).Err()
	}
	return n, err
}

// of returns the attempts of method, in order.
func (f *fake) of(method string) []attempt {
	f.mu.Lock()
	defer f.mu.Unlock()
	var got []attempt
	for _, a := range f.attempts {
		if a.method == method {
			got = append(got, a)
		}
	}
	return got
}

func written(version uint64) *v1.WritePlanResponse {
	return &v1.WritePlanResponse{Plan: &v1.Plan{Version: version}, Revision: &v1.WrittenRevision{Number: 1}}
}

func (f *fake) GetPlan(ctx context.Context, r *v1.GetPlanRequest) (*v1.GetPlanResponse, error) {
	if _, err := f.record(ctx, "GetPlan", nil); err != nil {
		return nil, err
	}
	return &v1.GetPlanResponse{Plan: &v1.Plan{TaskId: r.GetTaskId(), Version: 3}}, nil
}

func (f *fake) ListPlanRevisions(ctx context.Context, _ *v1.ListPlanRevisionsRequest) (*v1.ListPlanRevisionsResponse, error) {
	_, err := f.record(ctx, "ListPlanRevisions", nil)
	return &v1.ListPlanRevisionsResponse{}, err
}

func (f *fake) GetPlanRevision(ctx context.Context, _ *v1.GetPlanRevisionRequest) (*v1.GetPlanRevisionResponse, error) {
	_, err := f.record(ctx, "GetPlanRevision", nil)
	return &v1.GetPlanRevisionResponse{}, err
}

func (f *fake) GetPlanChanges(ctx context.Context, r *v1.GetPlanChangesRequest) (*v1.GetPlanChangesResponse, error) {
	_, err := f.record(ctx, "GetPlanChanges", nil)
	return &v1.GetPlanChangesResponse{Plan: &v1.Plan{Version: 3}, SinceVersion: r.GetSinceVersion(), Diff: &v1.PlanDiff{}}, err
}

func (f *fake) DiffPlanRevisions(ctx context.Context, _ *v1.DiffPlanRevisionsRequest) (*v1.DiffPlanRevisionsResponse, error) {
	_, err := f.record(ctx, "DiffPlanRevisions", nil)
	return &v1.DiffPlanRevisionsResponse{Diff: &v1.PlanDiff{}}, err
}

func (f *fake) CreatePlan(ctx context.Context, r *v1.CreatePlanRequest) (*v1.WritePlanResponse, error) {
	_, err := f.record(ctx, "CreatePlan", r.RequestId)
	return written(1), err
}

func (f *fake) UpdatePlan(ctx context.Context, r *v1.UpdatePlanRequest) (*v1.WritePlanResponse, error) {
	n, err := f.record(ctx, "UpdatePlan", r.RequestId)
	return written(uint64(4 + n)), err
}

func (f *fake) EditPlan(ctx context.Context, r *v1.EditPlanRequest) (*v1.WritePlanResponse, error) {
	_, err := f.record(ctx, "EditPlan", r.RequestId)
	if r.GetMerge() { // a merged write's answer says from which version it merged
		return &v1.WritePlanResponse{Plan: &v1.Plan{Version: 5}, Revision: &v1.WrittenRevision{Number: 2},
			Merge: &v1.MergeMarker{FromVersion: r.GetExpectedVersion(), ToVersion: 4}}, err
	}
	return written(5), err
}

func (f *fake) RestorePlanRevision(ctx context.Context, r *v1.RestorePlanRevisionRequest) (*v1.RestorePlanRevisionResponse, error) {
	_, err := f.record(ctx, "RestorePlanRevision", r.RequestId)
	return &v1.RestorePlanRevisionResponse{}, err
}

func (f *fake) SavePlan(ctx context.Context, _ *v1.SavePlanRequest) (*v1.WritePlanResponse, error) {
	_, err := f.record(ctx, "SavePlan", nil)
	return written(6), err
}

func (f *fake) DeletePlan(ctx context.Context, _ *v1.DeletePlanRequest) (*v1.DeletePlanResponse, error) {
	_, err := f.record(ctx, "DeletePlan", nil)
	return &v1.DeletePlanResponse{}, err
}

func (f *fake) RevertPlan(ctx context.Context, _ *v1.RevertPlanRequest) (*v1.WritePlanResponse, error) {
	_, err := f.record(ctx, "RevertPlan", nil)
	return written(7), err
}

func (f *fake) MarkImplementationStarted(ctx context.Context, _ *v1.MarkImplementationStartedRequest) (*v1.MarkImplementationStartedResponse, error) {
	_, err := f.record(ctx, "MarkImplementationStarted", nil)
	return &v1.MarkImplementationStartedResponse{}, err
}

func (f *fake) GetTask(ctx context.Context, _ *v1.GetTaskRequest) (*v1.GetTaskResponse, error) {
	_, err := f.record(ctx, "GetTask", nil)
	return &v1.GetTaskResponse{}, err
}

func (f *fake) CreateTask(ctx context.Context, _ *v1.CreateTaskRequest) (*v1.CreateTaskResponse, error) {
	_, err := f.record(ctx, "CreateTask", nil)
	return &v1.CreateTaskResponse{}, err
}

func (f *fake) DeleteTask(ctx context.Context, _ *v1.DeleteTaskRequest) (*v1.DeleteTaskResponse, error) {
	_, err := f.record(ctx, "DeleteTask", nil)
	return &v1.DeleteTaskResponse{}, err
}

// watch sets the scripts of WatchPlan's successive openings (the last one repeats).
func (f *fake) watch(scripts ...watchScript) *fake {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watches = scripts
	return f
}

func (f *fake) WatchPlan(r *v1.WatchPlanRequest, stream grpc.ServerStreamingServer[v1.PlanChange]) error {
	ctx := stream.Context()
	md, _ := metadata.FromIncomingContext(ctx)
	f.mu.Lock()
	n := 0
	for _, earlier := range f.attempts {
		if earlier.method == "WatchPlan" {
			n++
		}
	}
	f.attempts = append(f.attempts, attempt{
		method: "WatchPlan", authorization: md.Get("authorization"), at: time.Now(),
		afterVersion: r.AfterVersion, content: r.GetIncludeContent(),
	})
	scripts := f.watches
	f.mu.Unlock()
	if len(scripts) == 0 {
		<-ctx.Done()
		return nil
	}
	return scripts[min(n, len(scripts)-1)](r, stream)
}

// sends is a watch opening that sends changes (kind, version pairs), then ends with err; hang
// waits for the client to go away instead.
func sends(err error, changes ...*v1.PlanChange) watchScript {
	return func(_ *v1.WatchPlanRequest, stream grpc.ServerStreamingServer[v1.PlanChange]) error {
		for _, change := range changes {
			if sendErr := stream.Send(change); sendErr != nil {
				return sendErr
			}
		}
		if err == hang {
			<-stream.Context().Done()
			return nil
		}
		return err
	}
}

func change(kind v1.PlanChangeKind, version uint64) *v1.PlanChange {
	return &v1.PlanChange{Kind: kind, Plan: &v1.Plan{Version: version}}
}

// serve starts f on a loopback port; it stops when the test ends.
func serve(t *testing.T, f *fake) string {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := grpc.NewServer()
	v1.RegisterPlanServiceServer(server, f)
	v1.RegisterTaskServiceServer(server, f)
	go func() { _ = server.Serve(listener) }()
	t.Cleanup(server.Stop)
	return listener.Addr().String()
}

// fast is a retry policy with short backoffs, so tests of attempt counts run quickly.
var fast = taskplans.RetryPolicy{InitialBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond}

// dialFake serves f and dials it with options.
func dialFake(t *testing.T, f *fake, options ...taskplans.Option) *taskplans.Client {
	t.Helper()
	client, err := taskplans.Dial(serve(t, f), options...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}

// rejection is a status error as the service sends it: ErrorInfo with reason and metadata (none
// when reason is empty), and a RetryInfo when retryDelay > 0.
func rejection(c codes.Code, reason string, metadata map[string]string, retryDelay time.Duration) error {
	st := status.New(c, "scripted "+reason)
	var details []protoadapt.MessageV1
	if reason != "" {
		details = append(details, &errdetails.ErrorInfo{Reason: reason, Domain: taskplans.ErrorDomain, Metadata: metadata})
	}
	if retryDelay > 0 {
		details = append(details, &errdetails.RetryInfo{RetryDelay: durationpb.New(retryDelay)})
	}
	withDetails, err := st.WithDetails(details...)
	if err != nil {
		panic(err)
	}
	return withDetails.Err()
}

func unavailable() error { return status.Error(codes.Unavailable, "scripted: connection dropped") }

func background(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}
