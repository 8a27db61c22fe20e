package dev.taskplans.client;

import dev.taskplans.v1.CreatePlanRequest;
import dev.taskplans.v1.CreateTaskRequest;
import dev.taskplans.v1.CreateTaskResponse;
import dev.taskplans.v1.DeletePlanRequest;
import dev.taskplans.v1.DeletePlanResponse;
import dev.taskplans.v1.DeleteTaskRequest;
import dev.taskplans.v1.DeleteTaskResponse;
import dev.taskplans.v1.DiffPlanRevisionsRequest;
import dev.taskplans.v1.DiffPlanRevisionsResponse;
import dev.taskplans.v1.EditPlanRequest;
import dev.taskplans.v1.ExportTaskRequest;
import dev.taskplans.v1.ExportTaskResponse;
import dev.taskplans.v1.GetPlanChangesRequest;
import dev.taskplans.v1.GetPlanChangesResponse;
import dev.taskplans.v1.GetPlanRequest;
import dev.taskplans.v1.GetPlanResponse;
import dev.taskplans.v1.GetPlanRevisionRequest;
import dev.taskplans.v1.GetPlanRevisionResponse;
import dev.taskplans.v1.GetTaskRequest;
import dev.taskplans.v1.GetTaskResponse;
import dev.taskplans.v1.ImportTaskRequest;
import dev.taskplans.v1.ImportTaskResponse;
import dev.taskplans.v1.ListPlanRevisionsRequest;
import dev.taskplans.v1.ListPlanRevisionsResponse;
import dev.taskplans.v1.ListTasksRequest;
import dev.taskplans.v1.ListTasksResponse;
import dev.taskplans.v1.MarkImplementationStartedRequest;
import dev.taskplans.v1.MarkImplementationStartedResponse;
import dev.taskplans.v1.PlanServiceGrpc;
import dev.taskplans.v1.PlanServiceGrpc.PlanServiceBlockingStub;
import dev.taskplans.v1.RestorePlanRevisionRequest;
import dev.taskplans.v1.RestorePlanRevisionResponse;
import dev.taskplans.v1.RevertPlanRequest;
import dev.taskplans.v1.SavePlanRequest;
import dev.taskplans.v1.TaskServiceGrpc;
import dev.taskplans.v1.TaskServiceGrpc.TaskServiceBlockingStub;
import dev.taskplans.v1.TaskServiceGrpc.TaskServiceStub;
import dev.taskplans.v1.UpdatePlanRequest;
import dev.taskplans.v1.WatchPlanRequest;
import dev.taskplans.v1.WritePlanResponse;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ChannelCredentials;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.Deadline;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.stub.AbstractStub;
import io.grpc.stub.StreamObserver;
import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Consumer;

/**
 * A client of the task-plan service: {@code taskplans.v1.PlanService} and {@code TaskService} over
 * one gRPC channel, with what clients/SDK.md promises.
 *
 * <ul>
 *   <li>Every unary call has a deadline covering all its attempts: {@link Builder#defaultTimeout} (30
 *       s), or the call's own ({@link #withTimeout}, {@link #withDeadline}).
 *   <li>Safe calls are retried ({@link RetryPolicy#DEFAULT}): the reads and the writes that carry a
 *       {@code request_id} ({@code createPlan}, {@code updatePlan}, {@code editPlan}, {@code
 *       restorePlanRevision}); when the request has none, the client sets one random UUID per logical
 *       call, so every attempt carries the same id.
 *   <li>The token ({@link Builder#token}, or a {@link TokenProvider} asked before every attempt) goes
 *       out as {@code authorization: Bearer <token>}; {@link #withToken} or an {@code authorization}
 *       entry in {@link #withMetadata} wins for that call, and the provider is then not asked.
 *   <li>Every failed call throws a {@link TaskPlansException}.
 *   <li>{@link #watch} yields a plan's changes and resumes after the last one on a retriable error.
 * </ul>
 *
 * <pre>{@code
 * try (TaskPlansClient client = TaskPlansClient.builder("plans.internal:50051")
 *     .tls(caFile, null, null, null).token(jwt).build()) {
 *   GetPlanResponse read = client.getPlan(GetPlanRequest.newBuilder().setTaskId("task-1").build());
 * }
 * }</pre>
 *
 * <p>A client is thread-safe. The {@code with...} methods return a view sharing the channel with
 * other settings for the calls made through it; closing any view closes the channel.
 */
public final class TaskPlansClient implements AutoCloseable {
  /** The client's default deadline of a unary call. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  private static final CallOptions.Key<Metadata> HEADERS = CallOptions.Key.create("taskplans.headers");

  /** What every view of one client shares. */
  private record Shared(
      ManagedChannel managed,
      Channel channel,
      PlanServiceBlockingStub plans,
      TaskServiceBlockingStub tasks,
      TokenProvider provider,
      RetryPolicy retry,
      Duration timeout) {}

  /** One view's call settings; null fields take the client's. */
  private record Settings(String token, Metadata metadata, Duration timeout, Deadline deadline) {}

  private final Shared shared;
  private final Settings settings;

  private TaskPlansClient(Shared shared, Settings settings) {
    this.shared = shared;
    this.settings = settings;
  }

  /** Starts building a client of {@code target} ({@code "host:port"}, or any gRPC target URI). */
  public static Builder builder(String target) {
    return new Builder(target);
  }

  /** How {@link #builder} connects. Plaintext unless {@link #tls} is given. */
  public static final class Builder {
    private final String target;
    private String token;
    private TokenProvider provider;
    private ChannelCredentials credentials;
    private String serverName;
    private Duration timeout = DEFAULT_TIMEOUT;
    private RetryPolicy retry = RetryPolicy.DEFAULT;
    private Consumer<ManagedChannelBuilder<?>> customizer = b -> {};

    private Builder(String target) {
      this.target = Objects.requireNonNull(target, "target");
    }

    /** Sends {@code authorization: Bearer <token>} on every call (the service's JWT when auth is on). */
    public Builder token(String token) {
      this.token = Objects.requireNonNull(token, "token");
      this.provider = null;
      return this;
    }

    /** Instead of {@link #token}: asks {@code provider} for the token before every attempt. */
    public Builder tokenProvider(TokenProvider provider) {
      this.provider = Objects.requireNonNull(provider, "provider");
      this.token = null;
      return this;
    }

    /**
     * Connects over TLS, or mTLS with a client certificate. Every argument may be null: {@code caFile}
     * (PEM; null: the system's roots), {@code certFile} and {@code keyFile} (a PEM certificate chain
     * and its PKCS#8 key, both or neither), {@code serverName} (the name the server's certificate must
     * carry, when not the target's host). The files are read at once; a missing or malformed one
     * throws {@link IllegalArgumentException}.
     */
    public Builder tls(String caFile, String certFile, String keyFile, String serverName) {
      if ((certFile == null || certFile.isEmpty()) != (keyFile == null || keyFile.isEmpty()))
        throw new IllegalArgumentException("tls: certFile and keyFile go together");
      TlsChannelCredentials.Builder tls = TlsChannelCredentials.newBuilder();
      try {
        if (caFile != null && !caFile.isEmpty()) tls.trustManager(new File(caFile));
        if (certFile != null && !certFile.isEmpty()) tls.keyManager(new File(certFile), new File(keyFile));
      } catch (IOException e) {
        throw new IllegalArgumentException("tls: " + e.getMessage(), e);
      }
      this.credentials = tls.build();
      this.serverName = serverName == null || serverName.isEmpty() ? null : serverName;
      return this;
    }

    /** Other channel credentials (instead of {@link #tls}); plaintext by default. */
    public Builder credentials(ChannelCredentials credentials) {
      this.credentials = Objects.requireNonNull(credentials, "credentials");
      return this;
    }

    /**
     * The deadline of every unary call that gives none, covering all its attempts (30 s); {@link
     * Duration#ZERO} for none.
     */
    public Builder defaultTimeout(Duration timeout) {
      if (timeout.isNegative()) throw new IllegalArgumentException("defaultTimeout must not be negative");
      this.timeout = timeout;
      return this;
    }

    /** How safe calls and watches are retried ({@link RetryPolicy#DEFAULT}). */
    public Builder retryPolicy(RetryPolicy policy) {
      this.retry = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /** No retries: every call makes one attempt, and a watch ends at its stream's first error. */
    public Builder noRetry() {
      this.retry = null;
      return this;
    }

    /**
     * Changes the channel before it is built (interceptors, executors, message sizes...), after this
     * package's settings.
     */
    public Builder channel(Consumer<ManagedChannelBuilder<?>> customizer) {
      this.customizer = Objects.requireNonNull(customizer, "customizer");
      return this;
    }

    /** Builds the client. Connecting is lazy: a server that cannot be reached fails the first call. */
    public TaskPlansClient build() {
      ManagedChannelBuilder<?> builder =
          Grpc.newChannelBuilder(target, credentials != null ? credentials : InsecureChannelCredentials.create());
      if (serverName != null) builder.overrideAuthority(serverName);
      // The server allows a ping every 10 s at most; one a minute finds a dead connection (20 s to
      // answer) and keeps idle watches through proxies.
      builder.keepAliveTime(60, TimeUnit.SECONDS).keepAliveTimeout(20, TimeUnit.SECONDS);
      // No retry policy of the channel's own (this client retries); gRPC's transparent retry of a
      // call that never left the client stays.
      builder.defaultServiceConfig(java.util.Map.of()).disableServiceConfigLookUp();
      customizer.accept(builder);
      ManagedChannel managed = builder.build();
      Channel channel = ClientInterceptors.intercept(managed, new HeadersInterceptor());
      TokenProvider tokens = provider != null ? provider : token != null ? fixed(token) : null;
      return new TaskPlansClient(
          new Shared(
              managed,
              channel,
              PlanServiceGrpc.newBlockingStub(channel),
              TaskServiceGrpc.newBlockingStub(channel),
              tokens,
              retry,
              timeout),
          new Settings(null, null, null, null));
    }

    private static TokenProvider fixed(String token) {
      return () -> token;
    }
  }

  /** Adds the per-attempt headers the client put in the call options. */
  private static final class HeadersInterceptor implements ClientInterceptor {
    @Override
    public <Req, Res> ClientCall<Req, Res> interceptCall(
        MethodDescriptor<Req, Res> method, CallOptions options, Channel next) {
      Metadata extra = options.getOption(HEADERS);
      ClientCall<Req, Res> call = next.newCall(method, options);
      if (extra == null) return call;
      return new SimpleForwardingClientCall<>(call) {
        @Override
        public void start(Listener<Res> listener, Metadata headers) {
          headers.merge(extra);
          super.start(listener, headers);
        }
      };
    }
  }

  // ---- views --------------------------------------------------------------------------------------

  /** A view whose calls send {@code token}: it wins over the client's token or provider (not asked). */
  public TaskPlansClient withToken(String token) {
    if (token == null || token.isEmpty()) throw new IllegalArgumentException("withToken: empty token");
    return new TaskPlansClient(shared, new Settings(token, settings.metadata, settings.timeout, settings.deadline));
  }

  /**
   * A view whose calls also send {@code metadata}. An {@code authorization} entry in it wins over the
   * client's token or provider (not asked); {@link #withToken} wins over both.
   */
  public TaskPlansClient withMetadata(Metadata metadata) {
    Metadata merged = new Metadata();
    if (settings.metadata != null) merged.merge(settings.metadata);
    merged.merge(metadata);
    return new TaskPlansClient(shared, new Settings(settings.token, merged, settings.timeout, settings.deadline));
  }

  /** A view whose unary calls each get {@code timeout} (all attempts included); {@link Duration#ZERO}: none. */
  public TaskPlansClient withTimeout(Duration timeout) {
    if (timeout.isNegative()) throw new IllegalArgumentException("withTimeout: negative timeout");
    return new TaskPlansClient(shared, new Settings(settings.token, settings.metadata, timeout, null));
  }

  /** A view whose unary calls end (all attempts included) at {@code deadline}. */
  public TaskPlansClient withDeadline(Deadline deadline) {
    Objects.requireNonNull(deadline, "deadline");
    return new TaskPlansClient(shared, new Settings(settings.token, settings.metadata, null, deadline));
  }

  /**
   * The channel itself, for calls of your own (with the generated stubs, {@link PlanServiceGrpc} and
   * {@link TaskServiceGrpc}); no retries, deadlines or token there.
   */
  public ManagedChannel channel() {
    return shared.managed;
  }

  /** Closes the channel (every view's): calls and watches in flight end. */
  @Override
  public void close() {
    shared.managed.shutdownNow();
    try {
      shared.managed.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // ---- PlanService --------------------------------------------------------------------------------

  /** Reads a plan (or a slice of it). Retried. */
  public GetPlanResponse getPlan(GetPlanRequest request) {
    return unary(shared.plans, PlanServiceBlockingStub::getPlan, request, true);
  }

  /** Creates a plan. Retried with one {@code request_id} (set when the request has none and retries are on). */
  public WritePlanResponse createPlan(CreatePlanRequest request) {
    if (shared.retry() != null && request.getRequestId().isEmpty())
      request = request.toBuilder().setRequestId(newRequestId()).build();
    return unary(shared.plans, PlanServiceBlockingStub::createPlan, request, true);
  }

  /** Replaces or appends to a plan. Retried with one {@code request_id} (set when the request has none and retries are on). */
  public WritePlanResponse updatePlan(UpdatePlanRequest request) {
    if (shared.retry() != null && request.getRequestId().isEmpty())
      request = request.toBuilder().setRequestId(newRequestId()).build();
    return unary(shared.plans, PlanServiceBlockingStub::updatePlan, request, true);
  }

  /**
   * Replaces one unique fragment (with {@code merge}, merged with what others wrote since {@code
   * expected_version}). Retried with one {@code request_id} (set when the request has none and retries
   * are on).
   */
  public WritePlanResponse editPlan(EditPlanRequest request) {
    if (shared.retry() != null && request.getRequestId().isEmpty())
      request = request.toBuilder().setRequestId(newRequestId()).build();
    return unary(shared.plans, PlanServiceBlockingStub::editPlan, request, true);
  }

  /** Restores a revision. Retried with one {@code request_id} (set when the request has none and retries are on). */
  public RestorePlanRevisionResponse restorePlanRevision(RestorePlanRevisionRequest request) {
    if (shared.retry() != null && request.getRequestId().isEmpty())
      request = request.toBuilder().setRequestId(newRequestId()).build();
    return unary(shared.plans, PlanServiceBlockingStub::restorePlanRevision, request, true);
  }

  /** An editor's save. Not retried (it carries no {@code request_id}). */
  public WritePlanResponse savePlan(SavePlanRequest request) {
    return unary(shared.plans, PlanServiceBlockingStub::savePlan, request, false);
  }

  /** Deletes a plan. Not retried. */
  public DeletePlanResponse deletePlan(DeletePlanRequest request) {
    return unary(shared.plans, PlanServiceBlockingStub::deletePlan, request, false);
  }

  /** Lists revisions, newest first. Retried. */
  public ListPlanRevisionsResponse listPlanRevisions(ListPlanRevisionsRequest request) {
    return unary(shared.plans, PlanServiceBlockingStub::listPlanRevisions, request, true);
  }

  /** Reads one revision. Retried. */
  public GetPlanRevisionResponse getPlanRevision(GetPlanRevisionRequest request) {
    return unary(shared.plans, PlanServiceBlockingStub::getPlanRevision, request, true);
  }

  /**
   * What changed since {@code since_version}: the current version, a unified diff, the changes in
   * between ({@code HISTORY_UNAVAILABLE} when that version's content can no longer be derived). Retried.
   */
  public GetPlanChangesResponse getPlanChanges(GetPlanChangesRequest request) {
    return unary(shared.plans, PlanServiceBlockingStub::getPlanChanges, request, true);
  }

  /** A unified diff between two revisions of a task. Retried. */
  public DiffPlanRevisionsResponse diffPlanRevisions(DiffPlanRevisionsRequest request) {
    return unary(shared.plans, PlanServiceBlockingStub::diffPlanRevisions, request, true);
  }

  /** Reverts to a revision. Not retried. */
  public WritePlanResponse revertPlan(RevertPlanRequest request) {
    return unary(shared.plans, PlanServiceBlockingStub::revertPlan, request, false);
  }

  /** Marks that implementation started. Not retried. */
  public MarkImplementationStartedResponse markImplementationStarted(MarkImplementationStartedRequest request) {
    return unary(shared.plans, PlanServiceBlockingStub::markImplementationStarted, request, false);
  }

  /** {@link #watch(String, Long, boolean)} from a snapshot, without content. */
  public PlanWatch watch(String taskId) {
    return watch(taskId, null, false);
  }

  /**
   * A plan's changes: a {@code SNAPSHOT} first when {@code afterVersion} is null, then every change.
   * On a retriable error ({@code UNAVAILABLE}, {@code WATCH_DRAINING} included) it reopens the stream
   * after the last version it yielded, with the retry policy's backoff (the count starts again after
   * every change). Any other error ({@code WATCH_HISTORY_EXPIRED}, {@code WATCH_TOO_SLOW}, {@code
   * TASK_NOT_FOUND}, auth) is thrown from {@code hasNext()} as a {@link TaskPlansException}. The watch
   * has no deadline; {@link PlanWatch#close()} (or closing the client) ends it without an error.
   */
  public PlanWatch watch(String taskId, Long afterVersion, boolean includeContent) {
    Objects.requireNonNull(taskId, "taskId");
    WatchPlanRequest.Builder request =
        WatchPlanRequest.newBuilder().setTaskId(taskId).setIncludeContent(includeContent);
    if (afterVersion != null) request.setAfterVersion(afterVersion);
    return watch(request.build());
  }

  /** {@link #watch(String, Long, boolean)} of a whole request. */
  public PlanWatch watch(WatchPlanRequest request) {
    Objects.requireNonNull(request, "request");
    return new PlanWatch(
        () -> shared.channel.newCall(
            PlanServiceGrpc.getWatchPlanMethod(), CallOptions.DEFAULT.withOption(HEADERS, headers())),
        request,
        shared.retry,
        shared.managed::isShutdown,
        shared.managed::resetConnectBackoff);
  }

  // ---- TaskService --------------------------------------------------------------------------------

  /** Creates a task. Not retried. */
  public CreateTaskResponse createTask(CreateTaskRequest request) {
    return unary(shared.tasks, TaskServiceBlockingStub::createTask, request, false);
  }

  /** Reads a task. Retried. */
  public GetTaskResponse getTask(GetTaskRequest request) {
    return unary(shared.tasks, TaskServiceBlockingStub::getTask, request, true);
  }

  /** Deletes a task and its plan. Not retried. */
  public DeleteTaskResponse deleteTask(DeleteTaskRequest request) {
    return unary(shared.tasks, TaskServiceBlockingStub::deleteTask, request, false);
  }

  /** A page of the tasks the caller reaches, in id order (export). Retried. */
  public ListTasksResponse listTasks(ListTasksRequest request) {
    return unary(shared.tasks, TaskServiceBlockingStub::listTasks, request, true);
  }

  /** A page of a task's export: the task, its HEAD and the next revisions, contents included. Retried. */
  public ExportTaskResponse exportTask(ExportTaskRequest request) {
    return unary(shared.tasks, TaskServiceBlockingStub::exportTask, request, true);
  }

  /**
   * Imports one exported task (operators only): the ImportTask stream's messages, a {@code start}
   * first, then {@code revisions} (each under 1 MiB). Retried as a whole stream (the import is
   * idempotent: a task already stored exactly so is reported unchanged).
   */
  public ImportTaskResponse importTask(List<ImportTaskRequest> requests) {
    return unary(TaskServiceGrpc.newStub(shared.channel), TaskPlansClient::importStream, List.copyOf(requests), true);
  }

  // One attempt of ImportTask: the messages in order, then the half-close; blocks for the answer.
  private static ImportTaskResponse importStream(TaskServiceStub stub, List<ImportTaskRequest> requests) {
    CompletableFuture<ImportTaskResponse> answer = new CompletableFuture<>();
    StreamObserver<ImportTaskRequest> out =
        stub.importTask(
            new StreamObserver<ImportTaskResponse>() {
              private ImportTaskResponse response;

              @Override
              public void onNext(ImportTaskResponse value) {
                response = value;
              }

              @Override
              public void onError(Throwable error) {
                answer.completeExceptionally(error);
              }

              @Override
              public void onCompleted() {
                answer.complete(response);
              }
            });
    for (ImportTaskRequest request : requests) out.onNext(request);
    out.onCompleted();
    try {
      return answer.get();
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      throw new StatusRuntimeException(Status.fromThrowable(cause), Status.trailersFromThrowable(cause));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw Status.CANCELLED.withDescription("interrupted while importing").asRuntimeException();
    }
  }

  // ---- the call loop ------------------------------------------------------------------------------

  private static String newRequestId() {
    return UUID.randomUUID().toString();
  }

  /** The logical call's deadline, or null for none. */
  private Deadline deadline() {
    if (settings.deadline != null) return settings.deadline;
    Duration timeout = settings.timeout != null ? settings.timeout : shared.timeout;
    return timeout.isZero() ? null : Deadline.after(timeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  /** One attempt's headers: the view's metadata and token, else the client's token (provider asked). */
  private Metadata headers() {
    Metadata headers = new Metadata();
    if (settings.metadata != null) headers.merge(settings.metadata);
    if (settings.token != null) {
      headers.removeAll(AUTHORIZATION);
      headers.put(AUTHORIZATION, "Bearer " + settings.token);
    } else if (shared.provider != null && !headers.containsKey(AUTHORIZATION)) {
      String token;
      try {
        token = shared.provider.token();
      } catch (Exception e) {
        if (e instanceof InterruptedException) Thread.currentThread().interrupt();
        throw TaskPlansException.ofStatus(
            Status.UNAUTHENTICATED.withDescription("the token provider failed: " + e).withCause(e));
      }
      if (token == null || token.isEmpty())
        throw TaskPlansException.ofStatus(
            Status.UNAUTHENTICATED.withDescription("the token provider returned no token"));
      headers.put(AUTHORIZATION, "Bearer " + token);
    }
    return headers;
  }

  /** One logical unary call: attempts of {@code method} on {@code stub}, retried when {@code safe}. */
  private <S extends AbstractStub<S>, Req, Res> Res unary(
      S stub, BiFunction<S, Req, Res> method, Req request, boolean safe) {
    Objects.requireNonNull(request, "request");
    Deadline deadline = deadline();
    RetryPolicy policy = safe ? shared.retry : null;
    long started = System.nanoTime();
    for (int failures = 1; ; failures++) {
      TaskPlansException failure;
      try {
        S attempt = stub.withOption(HEADERS, headers());
        if (deadline != null) attempt = attempt.withDeadline(deadline);
        return method.apply(attempt, request);
      } catch (StatusRuntimeException e) {
        failure = TaskPlansException.fromStatus(e.getStatus(), e.getTrailers(), e);
      }
      if (policy == null
          || failures >= policy.maxAttempts()
          || !failure.isRetriable()
          || shared.managed.isShutdown()) throw failure;
      Duration delay = policy.delayAfter(failures, failure.retryDelay(), ThreadLocalRandom.current()::nextDouble);
      long startsAt = System.nanoTime() + delay.toNanos();
      if (!policy.maxElapsed().isZero() && startsAt - started > policy.maxElapsed().toNanos()) throw failure;
      if (deadline != null && deadline.timeRemaining(TimeUnit.NANOSECONDS) <= delay.toNanos()) throw failure;
      try {
        TimeUnit.NANOSECONDS.sleep(delay.toNanos());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw TaskPlansException.ofStatus(Status.CANCELLED.withDescription("interrupted between attempts"));
      }
      // The channel's own reconnect backoff must not fail this attempt at once: connect now.
      if (failure.code() == Status.Code.UNAVAILABLE) shared.managed.resetConnectBackoff();
    }
  }
}
