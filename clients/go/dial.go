package taskplans

import (
	"context"
	"time"

	taskplansv1 "github.com/taskplans/taskplans/clients/go/taskplans/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
)

// serviceConfig retries reads (idempotent) on UNAVAILABLE; writes are left to the caller, who
// retries them with the same request_id.
const serviceConfig = `{
  "methodConfig": [{
    "name": [
      {"service": "taskplans.v1.PlanService", "method": "GetPlan"},
      {"service": "taskplans.v1.PlanService", "method": "ListPlanRevisions"},
      {"service": "taskplans.v1.PlanService", "method": "GetPlanRevision"},
      {"service": "taskplans.v1.TaskService", "method": "GetTask"}
    ],
    "retryPolicy": {
      "maxAttempts": 4,
      "initialBackoff": "0.1s",
      "maxBackoff": "2s",
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE"]
    }
  }]
}`

// Client holds one connection and both services' stubs.
type Client struct {
	Conn  *grpc.ClientConn
	Plans taskplansv1.PlanServiceClient
	Tasks taskplansv1.TaskServiceClient
}

// Close closes the connection.
func (c *Client) Close() error { return c.Conn.Close() }

// Option changes how Dial connects.
type Option func(*dialSettings)

type dialSettings struct {
	token    string
	insecure bool
	extra    []grpc.DialOption
}

// WithToken sends "authorization: Bearer <token>" on every call (the service's JWT when auth is on).
func WithToken(token string) Option { return func(s *dialSettings) { s.token = token } }

// WithDialOptions adds grpc dial options (TLS credentials, interceptors, ...); they are applied last.
// Without transport credentials among them, the connection is plaintext.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(s *dialSettings) { s.extra = append(s.extra, opts...) }
}

// Dial connects to target ("host:port" or any grpc-go target, e.g. "dns:///plans.internal:50051").
// Connecting is lazy: errors surface on the first call.
func Dial(target string, options ...Option) (*Client, error) {
	settings := dialSettings{insecure: true}
	for _, option := range options {
		option(&settings)
	}
	dialOptions := []grpc.DialOption{
		grpc.WithDefaultServiceConfig(serviceConfig),
		// The server allows pings every 10 s at most; one a minute keeps idle connections through proxies.
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: time.Minute, Timeout: 20 * time.Second}),
	}
	if settings.insecure {
		dialOptions = append(dialOptions, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	if settings.token != "" {
		dialOptions = append(dialOptions, grpc.WithPerRPCCredentials(bearer(settings.token)))
	}
	dialOptions = append(dialOptions, settings.extra...)
	conn, err := grpc.NewClient(target, dialOptions...)
	if err != nil {
		return nil, err
	}
	return &Client{
		Conn:  conn,
		Plans: taskplansv1.NewPlanServiceClient(conn),
		Tasks: taskplansv1.NewTaskServiceClient(conn),
	}, nil
}

type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

// RequireTransportSecurity is false so the token also works on plaintext connections inside a
// cluster; use TLS (WithDialOptions) anywhere else.
func (bearer) RequireTransportSecurity() bool { return false }
