package taskplans

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"time"

	taskplansv1 "github.com/taskplans/taskplans/clients/go/taskplans/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
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
	tls      *TLS
	extra    []grpc.DialOption
}

// TLS names PEM files for WithTLS; they are read when Dial runs.
type TLS struct {
	// CAFile is the CA bundle the server's certificate is checked against (empty: the system's roots).
	CAFile string
	// CertFile and KeyFile are a client certificate and its key, for a service that requires mTLS.
	CertFile string
	KeyFile  string
	// ServerName is the name the server's certificate must carry, when not the target's host.
	ServerName string
}

// WithTLS connects over TLS (and mTLS with CertFile and KeyFile) instead of plaintext.
func WithTLS(config TLS) Option { return func(s *dialSettings) { s.tls = &config } }

func (t TLS) credentials() (credentials.TransportCredentials, error) {
	config := &tls.Config{ServerName: t.ServerName, MinVersion: tls.VersionTLS12}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("taskplans: TLS CAFile: %w", err)
		}
		config.RootCAs = x509.NewCertPool()
		if !config.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("taskplans: TLS CAFile %s holds no PEM certificate", t.CAFile)
		}
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return nil, errors.New("taskplans: TLS CertFile and KeyFile go together")
	}
	if t.CertFile != "" {
		pair, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("taskplans: TLS client certificate: %w", err)
		}
		config.Certificates = []tls.Certificate{pair}
	}
	return credentials.NewTLS(config), nil
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
	switch {
	case settings.tls != nil:
		creds, err := settings.tls.credentials()
		if err != nil {
			return nil, err
		}
		dialOptions = append(dialOptions, grpc.WithTransportCredentials(creds))
	case settings.insecure:
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
// cluster; use TLS (WithTLS) anywhere else.
func (bearer) RequireTransportSecurity() bool { return false }
