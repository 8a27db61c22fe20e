package dev.taskplans.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Descriptors.ServiceDescriptor;
import com.google.protobuf.Message;
import dev.taskplans.v1.Plan;
import dev.taskplans.v1.PlanServiceGrpc;
import dev.taskplans.v1.PlanServiceOuterClass;
import dev.taskplans.v1.TaskOuterClass;
import dev.taskplans.v1.TaskServiceGrpc;
import io.grpc.protobuf.ProtoMethodDescriptorSupplier;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The client wraps every RPC of the generated stubs on the wire names of the protos, the version is
 * clients/VERSION, the policy's arithmetic.
 */
class PackageTest {
  /** The client has a method making {@code method}'s call, with its request and response types. */
  private static void assertClientMakes(io.grpc.MethodDescriptor<?, ?> method) throws NoSuchMethodException {
    Class<?> request = prototype(method.getRequestMarshaller()).getClass();
    if (method.getType() == io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING) {
      Method watch = TaskPlansClient.class.getMethod("watch", request);
      assertEquals(PlanWatch.class, watch.getReturnType(), method.getFullMethodName());
      return;
    }
    String bare = method.getBareMethodName();
    if (method.getType() == io.grpc.MethodDescriptor.MethodType.CLIENT_STREAMING) {
      // A client stream takes its messages as a list (the whole stream is one retried attempt).
      Method call = TaskPlansClient.class.getMethod(Character.toLowerCase(bare.charAt(0)) + bare.substring(1), List.class);
      assertEquals(prototype(method.getResponseMarshaller()).getClass(), call.getReturnType(), method.getFullMethodName());
      return;
    }
    assertEquals(io.grpc.MethodDescriptor.MethodType.UNARY, method.getType(), method.getFullMethodName());
    Method call = TaskPlansClient.class.getMethod(Character.toLowerCase(bare.charAt(0)) + bare.substring(1), request);
    assertEquals(prototype(method.getResponseMarshaller()).getClass(), call.getReturnType(), method.getFullMethodName());
  }

  private static Message prototype(io.grpc.MethodDescriptor.Marshaller<?> marshaller) {
    return (Message) ((io.grpc.MethodDescriptor.PrototypeMarshaller<?>) marshaller).getMessagePrototype();
  }

  private static void assertWrapped(ServiceDescriptor proto, io.grpc.ServiceDescriptor generated) throws Exception {
    // The Java options this build adds to the protos leave the wire names alone.
    assertEquals(proto.getFullName(), generated.getName());
    List<String> names = new ArrayList<>();
    for (io.grpc.MethodDescriptor<?, ?> method : generated.getMethods()) {
      var schema = ((ProtoMethodDescriptorSupplier) method.getSchemaDescriptor()).getMethodDescriptor();
      assertEquals(proto.getFullName() + "/" + schema.getName(), method.getFullMethodName());
      assertEquals(schema.getInputType(), prototype(method.getRequestMarshaller()).getDescriptorForType());
      assertEquals(schema.getOutputType(), prototype(method.getResponseMarshaller()).getDescriptorForType());
      assertClientMakes(method);
      names.add(schema.getName());
    }
    assertEquals(proto.getMethods().stream().map(m -> m.getName()).sorted().toList(), names.stream().sorted().toList());
  }

  @Test
  void theClientWrapsEveryMethodOfTheGeneratedStubs() throws Exception {
    assertWrapped(
        PlanServiceOuterClass.getDescriptor().findServiceByName("PlanService"), PlanServiceGrpc.getServiceDescriptor());
    assertWrapped(TaskOuterClass.getDescriptor().findServiceByName("TaskService"), TaskServiceGrpc.getServiceDescriptor());
    assertEquals("taskplans.v1.PlanService/GetPlan", PlanServiceGrpc.getGetPlanMethod().getFullMethodName());
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
    assertEquals(7, policy.maxAttempts());
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
