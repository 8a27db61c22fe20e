package dev.taskplans.client;

import com.google.protobuf.Any;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import dev.taskplans.v1.PlanChange;
import dev.taskplans.v1.PlanServiceGrpc;
import dev.taskplans.v1.TaskServiceGrpc;
import dev.taskplans.v1.WatchPlanRequest;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Deadline;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A scripted task-plan server on a loopback port (real HTTP/2, the client's real channel): each call
 * takes the next answer scripted for its method, and every call is recorded with its headers,
 * deadline and arrival time. It tests client logic only; the conformance run uses the real service.
 */
final class FakeServer implements AutoCloseable {
  /** One received call. */
  record Received(String method, Object request, String authorization, Long deadlineMillis, long atNanos) {}

  /** An answer: a response, an error, or (for a watch) changes then an ending. */
  sealed interface Answer permits Reply, Fail, Stream, Stall {}

  record Reply(Object response) implements Answer {}

  record Fail(StatusRuntimeException error) implements Answer {}

  /** Sends {@code changes}, then ends with {@code end} (null: completes; a watch that stays open: use hang). */
  record Stream(List<PlanChange> changes, StatusRuntimeException end, boolean hang) implements Answer {}

  /** Answers after {@code delay} with {@code then}. */
  record Stall(Duration delay, Answer then) implements Answer {}

  private static final Context.Key<Metadata> HEADERS = Context.key("headers");
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private final Map<String, Deque<Answer>> script = new java.util.HashMap<>();
  private final List<Received> received = Collections.synchronizedList(new ArrayList<>());
  final CountDownLatch watchCancelled = new CountDownLatch(1);
  private final Server server;

  FakeServer() throws IOException {
    // Every method of the generated services' descriptors, each answered from the script.
    ServerServiceDefinition.Builder plans = ServerServiceDefinition.builder(PlanServiceGrpc.getServiceDescriptor());
    for (MethodDescriptor<?, ?> method : PlanServiceGrpc.getServiceDescriptor().getMethods()) add(plans, method);
    ServerServiceDefinition.Builder tasks = ServerServiceDefinition.builder(TaskServiceGrpc.getServiceDescriptor());
    for (MethodDescriptor<?, ?> method : TaskServiceGrpc.getServiceDescriptor().getMethods()) add(tasks, method);
    ServerInterceptor headers =
        new ServerInterceptor() {
          @Override
          public <Q, S> ServerCall.Listener<Q> interceptCall(
              ServerCall<Q, S> call, Metadata metadata, ServerCallHandler<Q, S> next) {
            return Contexts.interceptCall(Context.current().withValue(HEADERS, metadata), call, metadata, next);
          }
        };
    server =
        Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create())
            .addService(ServerInterceptors.intercept(plans.build(), headers))
            .addService(ServerInterceptors.intercept(tasks.build(), headers))
            .build()
            .start();
  }

  String target() {
    return "127.0.0.1:" + server.getPort();
  }

  /** Scripts the next answers of {@code method} ("GetPlan"); once they run out, calls fail UNIMPLEMENTED. */
  FakeServer script(String method, Answer... answers) {
    synchronized (script) {
      script.computeIfAbsent(method, m -> new ArrayDeque<>()).addAll(List.of(answers));
    }
    return this;
  }

  List<Received> received(String method) {
    synchronized (received) {
      return received.stream().filter(r -> r.method.equals(method)).toList();
    }
  }

  @Override
  public void close() throws InterruptedException {
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  @SuppressWarnings("unchecked")
  private <Q, S> void add(ServerServiceDefinition.Builder service, MethodDescriptor<Q, S> method) {
    String name = method.getBareMethodName();
    if (method.getType() == MethodDescriptor.MethodType.SERVER_STREAMING) {
      service.addMethod(
          method,
          ServerCalls.asyncServerStreamingCall(
              (request, observer) -> answer(name, next(name, request), (StreamObserver<Object>) observer)));
    } else {
      service.addMethod(
          method,
          ServerCalls.asyncUnaryCall(
              (request, observer) -> answer(name, next(name, request), (StreamObserver<Object>) observer)));
    }
  }

  private Answer next(String name, Object request) {
    Metadata headers = HEADERS.get();
    Deadline deadline = Context.current().getDeadline();
    received.add(
        new Received(
            name,
            request,
            headers == null ? null : headers.get(AUTHORIZATION),
            deadline == null ? null : deadline.timeRemaining(TimeUnit.MILLISECONDS),
            System.nanoTime()));
    synchronized (script) {
      Deque<Answer> answers = script.get(name);
      Answer answer = answers == null ? null : answers.poll();
      return answer != null ? answer : new Fail(Status.UNIMPLEMENTED.withDescription("not scripted").asRuntimeException());
    }
  }

  private void answer(String name, Answer answer, StreamObserver<Object> observer) {
    if (answer instanceof Reply reply) {
      observer.onNext(reply.response());
      observer.onCompleted();
    } else if (answer instanceof Fail fail) {
      observer.onError(fail.error());
    } else if (answer instanceof Stall stall) {
      try {
        Thread.sleep(stall.delay().toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      answer(name, stall.then(), observer);
    } else if (answer instanceof Stream stream) {
      ((ServerCallStreamObserver<Object>) observer).setOnCancelHandler(watchCancelled::countDown);
      for (PlanChange change : stream.changes()) observer.onNext(change);
      if (stream.hang()) return;
      if (stream.end() != null) observer.onError(stream.end());
      else observer.onCompleted();
    }
  }

  // ---- answers --------------------------------------------------------------------------------

  static Reply reply(Object response) {
    return new Reply(response);
  }

  /** An error as the service sends it: ErrorInfo, and RetryInfo / BadRequest when given. */
  static Fail fail(Status.Code code, String reason, Map<String, String> metadata, Duration retryDelay, String... violation) {
    com.google.rpc.Status.Builder status =
        com.google.rpc.Status.newBuilder().setCode(code.value()).setMessage(code + " " + reason + " happened.");
    if (reason != null)
      status.addDetails(
          Any.pack(
              ErrorInfo.newBuilder()
                  .setReason(reason)
                  .setDomain(TaskPlansException.ERROR_DOMAIN)
                  .putAllMetadata(metadata)
                  .build()));
    if (retryDelay != null)
      status.addDetails(
          Any.pack(
              RetryInfo.newBuilder()
                  .setRetryDelay(
                      com.google.protobuf.Duration.newBuilder()
                          .setSeconds(retryDelay.getSeconds())
                          .setNanos(retryDelay.getNano()))
                  .build()));
    if (violation.length == 2)
      status.addDetails(
          Any.pack(
              BadRequest.newBuilder()
                  .addFieldViolations(
                      BadRequest.FieldViolation.newBuilder().setField(violation[0]).setDescription(violation[1]))
                  .build()));
    return new Fail(StatusProto.toStatusRuntimeException(status.build()));
  }

  static Fail fail(Status.Code code, String reason) {
    return fail(code, reason, Map.of(), null);
  }

  /** A plain status, with no details (what a proxy or a dropped connection gives). */
  static Fail bare(Status status) {
    return new Fail(status.asRuntimeException());
  }

  static Stream stream(StatusRuntimeException end, PlanChange... changes) {
    return new Stream(List.of(changes), end, false);
  }

  static Stream hang(PlanChange... changes) {
    return new Stream(List.of(changes), null, true);
  }

  static Stall stall(Duration delay, Answer then) {
    return new Stall(delay, then);
  }

  static WatchPlanRequest watchRequest(Received received) {
    return (WatchPlanRequest) received.request();
  }
}
