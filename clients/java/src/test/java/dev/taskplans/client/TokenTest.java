package dev.taskplans.client;

import static dev.taskplans.client.FakeServer.bare;
import static dev.taskplans.client.FakeServer.reply;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskplans.v1.GetPlanRequest;
import dev.taskplans.v1.GetPlanResponse;
import io.grpc.Metadata;
import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A static token, a provider asked before every attempt, and the per-call override that wins. */
class TokenTest {
  private static final GetPlanRequest READ = GetPlanRequest.newBuilder().setTaskId("t-1").build();
  private static final RetryPolicy FAST = RetryPolicy.DEFAULT.withInitialBackoff(Duration.ofMillis(10));

  private FakeServer server;

  @BeforeEach
  void start() throws Exception {
    server = new FakeServer();
  }

  @AfterEach
  void stop() throws Exception {
    server.close();
  }

  private List<String> authorizations() {
    return server.received("GetPlan").stream().map(FakeServer.Received::authorization).toList();
  }

  @Test
  void aStaticTokenIsSentOnEveryCallAndNoneWithout() {
    server.script("GetPlan", reply(GetPlanResponse.getDefaultInstance()), reply(GetPlanResponse.getDefaultInstance()));
    try (TaskPlansClient client = TaskPlansClient.builder(server.target()).token("static-jwt").build()) {
      client.getPlan(READ);
    }
    try (TaskPlansClient client = TaskPlansClient.builder(server.target()).build()) {
      client.getPlan(READ);
    }
    assertEquals("Bearer static-jwt", authorizations().get(0));
    assertNull(authorizations().get(1));
  }

  @Test
  void theProviderIsAskedBeforeEveryAttempt() {
    AtomicInteger calls = new AtomicInteger();
    server.script(
        "GetPlan", bare(Status.UNAVAILABLE), bare(Status.UNAVAILABLE), reply(GetPlanResponse.getDefaultInstance()));
    try (TaskPlansClient client =
        TaskPlansClient.builder(server.target())
            .retryPolicy(FAST)
            .tokenProvider(() -> "jwt-" + calls.incrementAndGet())
            .build()) {
      client.getPlan(READ);
    }
    assertEquals(3, calls.get());
    assertEquals(List.of("Bearer jwt-1", "Bearer jwt-2", "Bearer jwt-3"), authorizations());
  }

  @Test
  void aPerCallTokenOrAuthorizationEntryWinsAndTheProviderIsNotAsked() {
    AtomicInteger calls = new AtomicInteger();
    server.script(
        "GetPlan",
        bare(Status.UNAVAILABLE),
        reply(GetPlanResponse.getDefaultInstance()),
        reply(GetPlanResponse.getDefaultInstance()),
        reply(GetPlanResponse.getDefaultInstance()));
    Metadata own = new Metadata();
    own.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer from-metadata");
    try (TaskPlansClient client =
        TaskPlansClient.builder(server.target())
            .retryPolicy(FAST)
            .tokenProvider(() -> "provided-" + calls.incrementAndGet())
            .build()) {
      client.withToken("override").getPlan(READ); // two attempts, both with the override
      client.withMetadata(own).getPlan(READ);
      client.withMetadata(own).withToken("override-2").getPlan(READ); // the token wins over the entry
    }
    assertEquals(0, calls.get(), "the provider was asked");
    assertEquals(
        List.of("Bearer override", "Bearer override", "Bearer from-metadata", "Bearer override-2"), authorizations());
  }

  @Test
  void aFailingProviderFailsTheCallUnauthenticatedWithoutSendingOrRetryingIt() {
    AtomicInteger calls = new AtomicInteger();
    server.script("GetPlan", reply(GetPlanResponse.getDefaultInstance()));
    try (TaskPlansClient client =
        TaskPlansClient.builder(server.target())
            .retryPolicy(FAST)
            .tokenProvider(
                () -> {
                  calls.incrementAndGet();
                  throw new IllegalStateException("the identity service is down");
                })
            .build()) {
      TaskPlansException e = assertThrows(TaskPlansException.class, () -> client.getPlan(READ));
      assertEquals(Status.Code.UNAUTHENTICATED, e.code());
      assertEquals("", e.reason());
      assertTrue(e.isAuthError());
      assertTrue(e.getMessage().contains("the identity service is down"), e.getMessage());
    }
    assertEquals(1, calls.get());
    assertEquals(0, server.received("GetPlan").size());
  }
}
