package taskplans_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	taskplans "github.com/taskplans/taskplans/clients/go"
	v1 "github.com/taskplans/taskplans/clients/go/taskplans/v1"
	"google.golang.org/grpc/metadata"
)

// Appends a section to a task's plan. The client retries it safely by itself: it gives the write a
// request_id, so a repeated attempt is answered with the first outcome instead of appending twice.
func Example() {
	client, err := taskplans.Dial("127.0.0.1:50051", taskplans.WithToken("<jwt>"))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	response, err := client.Plans.UpdatePlan(context.Background(), &v1.UpdatePlanRequest{
		TaskId:  "t-1",
		Mode:    v1.WriteMode_WRITE_MODE_APPEND,
		Content: "## Findings\n- it works\n",
	})
	switch {
	case err == nil:
		fmt.Println("version", response.GetPlan().GetVersion())
	case taskplans.IsNotFound(err):
		log.Print("no plan yet: create it with CreatePlan")
	default:
		log.Fatal(err)
	}
}

// Dials over mTLS: a CA to check the server against, a client certificate, and the name the
// server's certificate carries when it is not the target's host. Without CertFile and KeyFile: TLS.
func ExampleDial_tls() {
	client, err := taskplans.Dial("plans.internal:50051",
		taskplans.WithTLS(taskplans.TLS{CAFile: "ca.crt", CertFile: "client.crt", KeyFile: "client.key", ServerName: "plans.internal"}),
		taskplans.WithToken(os.Getenv("TASKPLANS_TOKEN")),
	)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
}

// Dials in plaintext (inside a cluster) with a deadline of 5 s for calls whose context has none.
func ExampleWithDefaultTimeout() {
	client, err := taskplans.Dial("127.0.0.1:50051", taskplans.WithDefaultTimeout(5*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
}

// A token provider is called before every attempt: here it reads a file another process refreshes.
func ExampleWithTokenProvider() {
	client, err := taskplans.Dial("127.0.0.1:50051", taskplans.WithTokenProvider(func(ctx context.Context) (string, error) {
		token, err := os.ReadFile("/var/run/secrets/taskplans/token")
		return string(token), err
	}))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
}

// A call made on behalf of someone else sends their token; the client's token (or provider) is not
// used for it. An "authorization" entry in the call's outgoing metadata wins the same way.
func ExampleWithCallToken() {
	client, err := taskplans.Dial("127.0.0.1:50051", taskplans.WithToken("<service jwt>"))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	ctx := taskplans.WithCallToken(context.Background(), "<the user's jwt>")
	_, _ = client.Plans.GetPlan(ctx, &v1.GetPlanRequest{TaskId: "t-1"})

	ctx = metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer <the user's jwt>")
	_, _ = client.Plans.GetPlan(ctx, &v1.GetPlanRequest{TaskId: "t-1"})
}

// Changes the retry policy (its zero fields keep the defaults), or turns retries off.
func ExampleWithRetry() {
	patient, err := taskplans.Dial("127.0.0.1:50051", taskplans.WithRetry(taskplans.RetryPolicy{
		MaxAttempts: 8,
		MaxBackoff:  10 * time.Second,
		MaxElapsed:  time.Minute,
	}))
	if err != nil {
		log.Fatal(err)
	}
	defer patient.Close()

	once, err := taskplans.Dial("127.0.0.1:50051", taskplans.WithoutRetry())
	if err != nil {
		log.Fatal(err)
	}
	defer once.Close()
}

// Follows a plan's changes; the watch survives replica restarts by reopening after the last version.
func ExampleClient_Watch() {
	client, err := taskplans.Dial("127.0.0.1:50051", taskplans.WithToken("<jwt>"))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	ctx, stop := context.WithCancel(context.Background())
	defer stop() // or w.Close(): either ends the watch without an error
	w := client.Watch(ctx, "t-1", taskplans.WatchIncludeContent())
	defer w.Close()
	for w.Next() {
		change := w.Change()
		fmt.Println(change.GetKind(), change.GetPlan().GetVersion())
	}
	switch err := w.Err(); {
	case taskplans.IsWatchHistoryExpired(err), taskplans.IsWatchTooSlow(err):
		log.Print("read the plan again with GetPlan and watch after its version")
	case err != nil:
		log.Fatal(err)
	}
}

// Every failed call returns an *Error: branch on its reason (or the Is* helpers), never on Message.
func ExampleError() {
	client, err := taskplans.Dial("127.0.0.1:50051", taskplans.WithToken("<jwt>"))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	_, err = client.Plans.GetPlan(context.Background(), &v1.GetPlanRequest{TaskId: ""})
	var e *taskplans.Error
	if errors.As(err, &e) {
		fmt.Println(e.CodeName(), e.Reason, e.NextAction)
		for _, v := range e.FieldViolations {
			fmt.Println(v.Field, v.Description)
		}
		if e.HasRetryDelay {
			fmt.Println("retry after", e.RetryDelay)
		}
	}
	if taskplans.IsVersionMismatch(err) {
		log.Print("read again, then decide again")
	}
}
