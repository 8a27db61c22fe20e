// A Go back end as its team traces it: the OpenTelemetry SDK with the standard gRPC instrumentation
// (otelgrpc's client stats handler), calling the service through the Go client package inside a span
// of its own. Prints that span's trace id.
// usage: go run . <host:port> <OTLP gRPC endpoint host:port>
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	taskplans "github.com/taskplans/taskplans/clients/go"
	v1 "github.com/taskplans/taskplans/clients/go/taskplans/v1"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc"
)

func main() {
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(target, endpoint string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	exporter, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(endpoint), otlptracegrpc.WithInsecure())
	if err != nil {
		return err
	}
	provider := sdktrace.NewTracerProvider(
		sdktrace.WithSyncer(exporter),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "go-backend"))),
	)
	otel.SetTracerProvider(provider)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	client, err := taskplans.Dial(target, taskplans.WithDialOptions(grpc.WithStatsHandler(otelgrpc.NewClientHandler())))
	if err != nil {
		return err
	}
	defer client.Close()
	ctx, span := otel.Tracer("go-backend").Start(ctx, "backend job")
	taskID := fmt.Sprintf("traced-go-%d", time.Now().UnixNano())
	if _, err := client.Tasks.CreateTask(ctx, &v1.CreateTaskRequest{TaskId: taskID, WorkspaceId: "ws-1", Title: "traced"}); err != nil {
		return err
	}
	if _, err := client.Plans.CreatePlan(ctx, &v1.CreatePlanRequest{TaskId: taskID, Content: "# Traced\n"}); err != nil {
		return err
	}
	if _, err := client.Plans.UpdatePlan(ctx, &v1.UpdatePlanRequest{TaskId: taskID, Content: "- a step", Mode: v1.WriteMode_WRITE_MODE_APPEND}); err != nil {
		return err
	}
	span.End()
	if err := provider.Shutdown(ctx); err != nil {
		return err
	}
	fmt.Println(span.SpanContext().TraceID().String())
	return nil
}
