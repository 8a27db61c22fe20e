package dev.taskplans.client;

import com.google.protobuf.Message;
import dev.taskplans.v1.CreatePlanRequest;
import dev.taskplans.v1.CreateTaskRequest;
import dev.taskplans.v1.CreateTaskResponse;
import dev.taskplans.v1.DeletePlanRequest;
import dev.taskplans.v1.DeletePlanResponse;
import dev.taskplans.v1.DeleteTaskRequest;
import dev.taskplans.v1.DeleteTaskResponse;
import dev.taskplans.v1.EditPlanRequest;
import dev.taskplans.v1.GetPlanRequest;
import dev.taskplans.v1.GetPlanResponse;
import dev.taskplans.v1.GetPlanRevisionRequest;
import dev.taskplans.v1.GetPlanRevisionResponse;
import dev.taskplans.v1.GetTaskRequest;
import dev.taskplans.v1.GetTaskResponse;
import dev.taskplans.v1.ListPlanRevisionsRequest;
import dev.taskplans.v1.ListPlanRevisionsResponse;
import dev.taskplans.v1.MarkImplementationStartedRequest;
import dev.taskplans.v1.MarkImplementationStartedResponse;
import dev.taskplans.v1.PlanChange;
import dev.taskplans.v1.PlanServiceOuterClass;
import dev.taskplans.v1.RestorePlanRevisionRequest;
import dev.taskplans.v1.RestorePlanRevisionResponse;
import dev.taskplans.v1.RevertPlanRequest;
import dev.taskplans.v1.SavePlanRequest;
import dev.taskplans.v1.TaskOuterClass;
import dev.taskplans.v1.UpdatePlanRequest;
import dev.taskplans.v1.WatchPlanRequest;
import dev.taskplans.v1.WritePlanResponse;
import io.grpc.MethodDescriptor;
import io.grpc.MethodDescriptor.MethodType;
import io.grpc.protobuf.ProtoMethodDescriptorSupplier;
import io.grpc.protobuf.ProtoUtils;
import java.util.List;

/**
 * The gRPC method descriptors of {@code taskplans.v1.PlanService} and {@code taskplans.v1.TaskService},
 * for calls this package does not wrap (your own stubs, interceptors or a fake server in tests). Each
 * carries its proto method descriptor, so server reflection and tools see the real schema.
 */
public final class TaskPlansMethods {
  private TaskPlansMethods() {}

  /** {@code taskplans.v1.PlanService}. */
  public static final String PLAN_SERVICE = "taskplans.v1.PlanService";

  /** {@code taskplans.v1.TaskService}. */
  public static final String TASK_SERVICE = "taskplans.v1.TaskService";

  public static final MethodDescriptor<GetPlanRequest, GetPlanResponse> GET_PLAN =
      plan("GetPlan", GetPlanRequest.getDefaultInstance(), GetPlanResponse.getDefaultInstance());
  public static final MethodDescriptor<CreatePlanRequest, WritePlanResponse> CREATE_PLAN =
      plan("CreatePlan", CreatePlanRequest.getDefaultInstance(), WritePlanResponse.getDefaultInstance());
  public static final MethodDescriptor<UpdatePlanRequest, WritePlanResponse> UPDATE_PLAN =
      plan("UpdatePlan", UpdatePlanRequest.getDefaultInstance(), WritePlanResponse.getDefaultInstance());
  public static final MethodDescriptor<EditPlanRequest, WritePlanResponse> EDIT_PLAN =
      plan("EditPlan", EditPlanRequest.getDefaultInstance(), WritePlanResponse.getDefaultInstance());
  public static final MethodDescriptor<RestorePlanRevisionRequest, RestorePlanRevisionResponse>
      RESTORE_PLAN_REVISION =
          plan(
              "RestorePlanRevision",
              RestorePlanRevisionRequest.getDefaultInstance(),
              RestorePlanRevisionResponse.getDefaultInstance());
  public static final MethodDescriptor<SavePlanRequest, WritePlanResponse> SAVE_PLAN =
      plan("SavePlan", SavePlanRequest.getDefaultInstance(), WritePlanResponse.getDefaultInstance());
  public static final MethodDescriptor<DeletePlanRequest, DeletePlanResponse> DELETE_PLAN =
      plan("DeletePlan", DeletePlanRequest.getDefaultInstance(), DeletePlanResponse.getDefaultInstance());
  public static final MethodDescriptor<ListPlanRevisionsRequest, ListPlanRevisionsResponse>
      LIST_PLAN_REVISIONS =
          plan(
              "ListPlanRevisions",
              ListPlanRevisionsRequest.getDefaultInstance(),
              ListPlanRevisionsResponse.getDefaultInstance());
  public static final MethodDescriptor<GetPlanRevisionRequest, GetPlanRevisionResponse>
      GET_PLAN_REVISION =
          plan(
              "GetPlanRevision",
              GetPlanRevisionRequest.getDefaultInstance(),
              GetPlanRevisionResponse.getDefaultInstance());
  public static final MethodDescriptor<RevertPlanRequest, WritePlanResponse> REVERT_PLAN =
      plan("RevertPlan", RevertPlanRequest.getDefaultInstance(), WritePlanResponse.getDefaultInstance());
  public static final MethodDescriptor<MarkImplementationStartedRequest, MarkImplementationStartedResponse>
      MARK_IMPLEMENTATION_STARTED =
          plan(
              "MarkImplementationStarted",
              MarkImplementationStartedRequest.getDefaultInstance(),
              MarkImplementationStartedResponse.getDefaultInstance());
  /** The one server-streaming method. */
  public static final MethodDescriptor<WatchPlanRequest, PlanChange> WATCH_PLAN =
      method(
          PLAN_SERVICE,
          "WatchPlan",
          MethodType.SERVER_STREAMING,
          WatchPlanRequest.getDefaultInstance(),
          PlanChange.getDefaultInstance());

  public static final MethodDescriptor<CreateTaskRequest, CreateTaskResponse> CREATE_TASK =
      task("CreateTask", CreateTaskRequest.getDefaultInstance(), CreateTaskResponse.getDefaultInstance());
  public static final MethodDescriptor<GetTaskRequest, GetTaskResponse> GET_TASK =
      task("GetTask", GetTaskRequest.getDefaultInstance(), GetTaskResponse.getDefaultInstance());
  public static final MethodDescriptor<DeleteTaskRequest, DeleteTaskResponse> DELETE_TASK =
      task("DeleteTask", DeleteTaskRequest.getDefaultInstance(), DeleteTaskResponse.getDefaultInstance());

  /** Every PlanService method, in the proto's order. */
  public static final List<MethodDescriptor<?, ?>> PLAN_METHODS =
      List.of(
          GET_PLAN,
          CREATE_PLAN,
          UPDATE_PLAN,
          EDIT_PLAN,
          RESTORE_PLAN_REVISION,
          SAVE_PLAN,
          DELETE_PLAN,
          LIST_PLAN_REVISIONS,
          GET_PLAN_REVISION,
          REVERT_PLAN,
          MARK_IMPLEMENTATION_STARTED,
          WATCH_PLAN);

  /** Every TaskService method, in the proto's order. */
  public static final List<MethodDescriptor<?, ?>> TASK_METHODS = List.of(CREATE_TASK, GET_TASK, DELETE_TASK);

  private static <Req extends Message, Res extends Message> MethodDescriptor<Req, Res> plan(
      String name, Req request, Res response) {
    return method(PLAN_SERVICE, name, MethodType.UNARY, request, response);
  }

  private static <Req extends Message, Res extends Message> MethodDescriptor<Req, Res> task(
      String name, Req request, Res response) {
    return method(TASK_SERVICE, name, MethodType.UNARY, request, response);
  }

  private static <Req extends Message, Res extends Message> MethodDescriptor<Req, Res> method(
      String service, String name, MethodType type, Req request, Res response) {
    return MethodDescriptor.<Req, Res>newBuilder()
        .setType(type)
        .setFullMethodName(MethodDescriptor.generateFullMethodName(service, name))
        .setSampledToLocalTracing(true)
        .setRequestMarshaller(ProtoUtils.marshaller(request))
        .setResponseMarshaller(ProtoUtils.marshaller(response))
        .setSchemaDescriptor(new Schema(service, name))
        .build();
  }

  /** The proto descriptors of a method, as generated stubs attach them. */
  private static final class Schema implements ProtoMethodDescriptorSupplier {
    private final String service;
    private final String method;

    Schema(String service, String method) {
      this.service = service;
      this.method = method;
    }

    @Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return service.equals(PLAN_SERVICE)
          ? PlanServiceOuterClass.getDescriptor()
          : TaskOuterClass.getDescriptor();
    }

    @Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName(service.substring(service.lastIndexOf('.') + 1));
    }

    @Override
    public com.google.protobuf.Descriptors.MethodDescriptor getMethodDescriptor() {
      return getServiceDescriptor().findMethodByName(method);
    }
  }
}
