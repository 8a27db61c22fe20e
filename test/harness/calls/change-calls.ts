import { credentials, type ServiceError } from "@grpc/grpc-js";
import {
  type DiffPlanRevisionsRequest,
  type DiffPlanRevisionsResponse,
  type GetPlanChangesRequest,
  type GetPlanChangesResponse,
  PlanServiceClient,
} from "@taskplans/contract";

/**
 * GetPlanChanges and DiffPlanRevisions through the generated client of the contract (the client
 * package gains them separately): a promise per call, no deadline, no retry.
 */
export class ChangeCalls {
  private readonly client: PlanServiceClient;

  constructor(port: number) {
    this.client = new PlanServiceClient(`127.0.0.1:${port}`, credentials.createInsecure());
  }

  getPlanChanges(request: GetPlanChangesRequest): Promise<GetPlanChangesResponse> {
    return new Promise((resolve, reject) =>
      this.client.getPlanChanges(request, (error: ServiceError | null, response) =>
        error ? reject(error) : resolve(response),
      ),
    );
  }

  diffPlanRevisions(request: DiffPlanRevisionsRequest): Promise<DiffPlanRevisionsResponse> {
    return new Promise((resolve, reject) =>
      this.client.diffPlanRevisions(request, (error: ServiceError | null, response) =>
        error ? reject(error) : resolve(response),
      ),
    );
  }

  close(): void {
    this.client.close();
  }
}
