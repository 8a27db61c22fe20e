package dev.taskplans.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Descriptors.ServiceDescriptor;
import dev.taskplans.v1.Plan;
import dev.taskplans.v1.PlanServiceOuterClass;
import dev.taskplans.v1.TaskOuterClass;
import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoMethodDescriptorSupplier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The method descriptors match the protos, the version is clients/VERSION, the policy's arithmetic. */
class PackageTest {
  private static void assertMatches(ServiceDescriptor service, List<MethodDescriptor<?, ?>> methods) {
    assertEquals(service.getMethods().size(), methods.size(), "methods of " + service.getFullName());
    for (int i = 0; i < methods.size(); i++) {
      com.google.protobuf.Descriptors.MethodDescriptor proto = service.getMethods().get(i);
      MethodDescriptor<?, ?> ours = methods.get(i);
      assertEquals(service.getFullName() + "/" + proto.getName(), ours.getFullMethodName());
      assertEquals(
          proto.isServerStreaming() ? MethodDescriptor.MethodType.SERVER_STREAMING : MethodDescriptor.MethodType.UNARY,
          ours.getType());
      assertEquals(proto, ((ProtoMethodDescriptorSupplier) ours.getSchemaDescriptor()).getMethodDescriptor());
      // The marshallers' messages are the method's input and output types.
      assertEquals(proto.getInputType(), messageType(ours.getRequestMarshaller()));
      assertEquals(proto.getOutputType(), messageType(ours.getResponseMarshaller()));
    }
  }

  private static com.google.protobuf.Descriptors.Descriptor messageType(MethodDescriptor.Marshaller<?> marshaller) {
    return ((com.google.protobuf.Message)
            ((MethodDescriptor.PrototypeMarshaller<?>) marshaller).getMessagePrototype())
        .getDescriptorForType();
  }

  @Test
  void theMethodDescriptorsAreTheProtosServices() {
    assertMatches(PlanServiceOuterClass.getDescriptor().findServiceByName("PlanService"), TaskPlansMethods.PLAN_METHODS);
    assertMatches(TaskOuterClass.getDescriptor().findServiceByName("TaskService"), TaskPlansMethods.TASK_METHODS);
  }

  @Test
  void contentBytesKeepsItsNumberAndJsonName() {
    var field = Plan.getDescriptor().findFieldByNumber(Plan.CONTENT_BYTE_COUNT_FIELD_NUMBER);
    assertEquals(4, field.getNumber());
    assertEquals("contentBytes", field.getJsonName());
    assertEquals(7, Plan.newBuilder().setContentByteCount(7).build().getContentByteCount());
  }

  @Test
  void thePomCarriesClientsVersion() throws Exception {
    String version = Files.readString(Path.of("../VERSION")).trim();
    Matcher own =
        Pattern.compile("<artifactId>taskplans-client</artifactId>\\s*(?:<!--.*?-->\\s*)?<version>([^<]+)</version>", Pattern.DOTALL)
            .matcher(Files.readString(Path.of("pom.xml")));
    assertTrue(own.find(), "no version in pom.xml");
    assertEquals(version, own.group(1));
  }

  @Test
  void theDelaysOfThePolicy() {
    RetryPolicy policy = RetryPolicy.DEFAULT;
    assertEquals(5, policy.maxAttempts());
    assertEquals(Duration.ofSeconds(30), policy.maxElapsed());
    // Factor 1 (random 0.5): 100, 200, 400 ms, ... capped at 5 s.
    assertEquals(Duration.ofMillis(100), policy.delayAfter(1, Optional.empty(), () -> 0.5));
    assertEquals(Duration.ofMillis(200), policy.delayAfter(2, Optional.empty(), () -> 0.5));
    assertEquals(Duration.ofMillis(400), policy.delayAfter(3, Optional.empty(), () -> 0.5));
    assertEquals(Duration.ofSeconds(5), policy.delayAfter(12, Optional.empty(), () -> 0.5));
    // Jitter: a factor in [0.8, 1.2].
    assertEquals(Duration.ofMillis(80), policy.delayAfter(1, Optional.empty(), () -> 0.0));
    assertTrue(policy.delayAfter(1, Optional.empty(), () -> 0.999_999).toMillis() <= 120);
    // RetryInfo is a floor, not a cap.
    assertEquals(Duration.ofSeconds(2), policy.delayAfter(1, Optional.of(Duration.ofSeconds(2)), () -> 0.5));
    assertEquals(Duration.ofMillis(400), policy.delayAfter(3, Optional.of(Duration.ofMillis(10)), () -> 0.5));
    assertThrows(IllegalArgumentException.class, () -> policy.withMaxAttempts(0));
    assertThrows(IllegalArgumentException.class, () -> policy.withJitter(1.5));
  }

  @Test
  void tlsFilesAreCheckedWhenTheClientIsBuilt() {
    assertThrows(
        IllegalArgumentException.class, () -> TaskPlansClient.builder("localhost:1").tls(null, "cert.pem", null, null));
    assertThrows(
        IllegalArgumentException.class,
        () -> TaskPlansClient.builder("localhost:1").tls("/nonexistent/ca.pem", null, null, null));
  }
}
