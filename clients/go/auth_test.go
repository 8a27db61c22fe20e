package taskplans_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	taskplans "github.com/taskplans/taskplans/clients/go"
	v1 "github.com/taskplans/taskplans/clients/go/taskplans/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
)

func TestTheStaticTokenIsSentOnEveryAttempt(t *testing.T) {
	f := newFake().script("GetPlan", unavailable(), nil)
	client := dialFake(t, f, taskplans.WithToken("static"), taskplans.WithRetry(fast))
	if _, err := client.Plans.GetPlan(background(t), &v1.GetPlanRequest{}); err != nil {
		t.Fatal(err)
	}
	for i, a := range f.of("GetPlan") {
		if !slices.Equal(a.authorization, []string{"Bearer static"}) {
			t.Fatalf("attempt %d sent authorization %q", i+1, a.authorization)
		}
	}
}

func TestTheTokenProviderIsCalledBeforeEveryAttempt(t *testing.T) {
	var calls atomic.Int32
	provider := func(context.Context) (string, error) { return fmt.Sprintf("token-%d", calls.Add(1)), nil }
	f := newFake().script("UpdatePlan", unavailable(), unavailable(), nil)
	client := dialFake(t, f, taskplans.WithTokenProvider(provider), taskplans.WithRetry(fast))
	if _, err := client.Plans.UpdatePlan(background(t), &v1.UpdatePlanRequest{}); err != nil {
		t.Fatal(err)
	}
	var sent []string
	for _, a := range f.of("UpdatePlan") {
		sent = append(sent, a.authorization...)
	}
	if want := []string{"Bearer token-1", "Bearer token-2", "Bearer token-3"}; !slices.Equal(sent, want) || calls.Load() != 3 {
		t.Fatalf("sent %q after %d provider calls; want %q", sent, calls.Load(), want)
	}
}

func TestThePerCallTokenWinsAndTheProviderIsNotCalled(t *testing.T) {
	var calls atomic.Int32
	provider := func(context.Context) (string, error) { calls.Add(1); return "provided", nil }
	f := newFake().script("GetPlan", unavailable(), nil)
	client := dialFake(t, f, taskplans.WithTokenProvider(provider), taskplans.WithRetry(fast))
	ctx := taskplans.WithCallToken(background(t), "override")
	if _, err := client.Plans.GetPlan(ctx, &v1.GetPlanRequest{}); err != nil {
		t.Fatal(err)
	}
	for i, a := range f.of("GetPlan") {
		if !slices.Equal(a.authorization, []string{"Bearer override"}) {
			t.Fatalf("attempt %d sent authorization %q, want only the call's", i+1, a.authorization)
		}
	}
	if calls.Load() != 0 {
		t.Fatalf("the provider was called %d times", calls.Load())
	}
}

func TestAuthorizationInTheCallsMetadataWinsOverTheClientsToken(t *testing.T) {
	f := newFake()
	client := dialFake(t, f, taskplans.WithToken("client"))
	ctx := metadata.AppendToOutgoingContext(background(t), "authorization", "Bearer mine")
	if _, err := client.Plans.GetPlan(ctx, &v1.GetPlanRequest{}); err != nil {
		t.Fatal(err)
	}
	// A later WithCallToken replaces it rather than sending two.
	if _, err := client.Plans.GetPlan(taskplans.WithCallToken(ctx, "later"), &v1.GetPlanRequest{}); err != nil {
		t.Fatal(err)
	}
	attempts := f.of("GetPlan")
	if !slices.Equal(attempts[0].authorization, []string{"Bearer mine"}) || !slices.Equal(attempts[1].authorization, []string{"Bearer later"}) {
		t.Fatalf("sent %q and %q", attempts[0].authorization, attempts[1].authorization)
	}
}

func TestAFailingProviderFailsTheCallUnauthenticatedWithoutRetry(t *testing.T) {
	var calls atomic.Int32
	refused := errors.New("identity service down")
	provider := func(context.Context) (string, error) { calls.Add(1); return "", refused }
	f := newFake()
	client := dialFake(t, f, taskplans.WithTokenProvider(provider))
	_, err := client.Plans.GetPlan(background(t), &v1.GetPlanRequest{})
	var e *taskplans.Error
	if !errors.As(err, &e) || e.Code != codes.Unauthenticated || e.Reason != "" || !taskplans.IsAuthError(err) {
		t.Fatalf("err %#v; want UNAUTHENTICATED without a reason", err)
	}
	if !errors.Is(err, refused) {
		t.Fatalf("err %v does not wrap the provider's error", err)
	}
	if calls.Load() != 1 || len(f.of("GetPlan")) != 0 {
		t.Fatalf("%d provider calls, %d attempts reached the server; want 1 and 0", calls.Load(), len(f.of("GetPlan")))
	}
}

func TestNoTokenSendsNoAuthorization(t *testing.T) {
	f := newFake()
	client := dialFake(t, f)
	if _, err := client.Plans.GetPlan(background(t), &v1.GetPlanRequest{}); err != nil {
		t.Fatal(err)
	}
	if got := f.of("GetPlan")[0].authorization; len(got) != 0 {
		t.Fatalf("sent authorization %q", got)
	}
}
