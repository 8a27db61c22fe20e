package taskplans

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"time"

	taskplansv1 "github.com/taskplans/taskplans/clients/go/taskplans/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
)

// Client holds one connection and both services' stubs. Calls through Plans and Tasks get the
// client's deadline, retries and token, and fail with an *Error.
type Client struct {
	Conn  *grpc.ClientConn
	Plans taskplansv1.PlanServiceClient
	Tasks taskplansv1.TaskServiceClient

	retry *RetryPolicy // nil: off
}

// Close closes the connection.
func (c *Client) Close() error { return c.Conn.Close() }

// Option changes how Dial connects.
type Option func(*dialSettings)

type dialSettings struct {
	token         string
	tokenProvider TokenProvider
	retry         *RetryPolicy
	timeout       time.Duration
	insecure      bool
	tls           *TLS
	extra         []grpc.DialOption
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

// WithDialOptions adds grpc dial options (TLS credentials, interceptors, ...); they are applied last.
// Without transport credentials among them, the connection is plaintext. Interceptors chained
// with grpc.WithChainUnaryInterceptor run inside the client's own (once per attempt).
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(s *dialSettings) { s.extra = append(s.extra, opts...) }
}

// Dial connects to target ("host:port" or any grpc-go target, e.g. "dns:///plans.internal:50051").
// Connecting is lazy: errors surface on the first call.
//
// Defaults (clients/SDK.md): plaintext, no token, a 30 s deadline on every unary call whose context
// has none (WithDefaultTimeout), the safe calls retried by DefaultRetryPolicy (WithRetry,
// WithoutRetry), keepalive pings every minute.
func Dial(target string, options ...Option) (*Client, error) {
	policy := DefaultRetryPolicy()
	settings := dialSettings{insecure: true, retry: &policy, timeout: DefaultTimeout}
	for _, option := range options {
		option(&settings)
	}
	// Outermost first: typed errors, then one deadline over the logical call, then its attempts,
	// each with the token (so a provider is called per attempt).
	unary := []grpc.UnaryClientInterceptor{typedErrors}
	if settings.timeout > 0 {
		unary = append(unary, deadlineInterceptor(settings.timeout))
	}
	if settings.retry != nil {
		unary = append(unary, retryInterceptor(*settings.retry))
	}
	stream := []grpc.StreamClientInterceptor{typedStreamErrors}
	if tokens := (auth{settings.token, settings.tokenProvider}); !tokens.none() {
		unary = append(unary, tokens.unary)
		stream = append(stream, tokens.stream)
	}
	dialOptions := []grpc.DialOption{
		// The client's own retries are the only retry layer: no retry policy in a service config.
		// gRPC's transparent retry of a call that never left the client stays.
		grpc.WithChainUnaryInterceptor(unary...),
		grpc.WithChainStreamInterceptor(stream...),
		// The server allows pings every 10 s at most; one a minute keeps idle connections through proxies.
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: time.Minute, Timeout: 20 * time.Second}),
		// Reconnects from 100 ms up to 5 s, so a replica that restarts is found again within the retries
		// (gRPC's default starts at 1 s and grows to 2 min).
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.Config{
			BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 5 * time.Second,
		}}),
		// No service config from DNS TXT records: the client is the only retry layer.
		grpc.WithDisableServiceConfig(),
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
	dialOptions = append(dialOptions, settings.extra...)
	conn, err := grpc.NewClient(target, dialOptions...)
	if err != nil {
		return nil, err
	}
	return &Client{
		Conn:  conn,
		Plans: taskplansv1.NewPlanServiceClient(conn),
		Tasks: taskplansv1.NewTaskServiceClient(conn),
		retry: settings.retry,
	}, nil
}
