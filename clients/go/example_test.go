package taskplans_test

import (
	"context"
	"fmt"
	"log"
	"time"

	taskplans "github.com/taskplans/taskplans/clients/go"
	v1 "github.com/taskplans/taskplans/clients/go/taskplans/v1"
	"google.golang.org/protobuf/proto"
)

// Appends a section to a task's plan, retrying safely: the same request_id makes a repeated write
// answer with the first outcome instead of appending twice.
func Example() {
	client, err := taskplans.Dial("127.0.0.1:50051", taskplans.WithToken("<jwt>"))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	request := &v1.UpdatePlanRequest{
		TaskId:    "t-1",
		Mode:      v1.WriteMode_WRITE_MODE_APPEND,
		Content:   "## Findings\n- it works\n",
		RequestId: proto.String("t-1-findings-1"),
	}
	for attempt := 0; attempt < 3; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		response, err := client.Plans.UpdatePlan(ctx, request)
		cancel()
		switch {
		case err == nil:
			fmt.Println("version", response.GetPlan().GetVersion())
			return
		case taskplans.Reason(err) == "" || taskplans.Reason(err) == "LOCK_UNAVAILABLE":
			continue // transport failure or busy lock: the outcome is unknown or nothing was written; retry
		default:
			log.Fatalf("%s: %s", taskplans.Reason(err), taskplans.NextAction(err))
		}
	}
}
