import { type Client, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { ErrorInfoSchema, PlanService } from "./contract";

/** A PlanService client over the Connect protocol to the page's own origin, sending `token` if given. */
export function planClient(token: string): Client<typeof PlanService> {
  // The token lives in this closure only: never in storage, a cookie or the address.
  const bearer: Interceptor = (next) => (request) => {
    if (token !== "") request.header.set("authorization", `Bearer ${token}`);
    return next(request);
  };
  const transport = createConnectTransport({ baseUrl: window.location.origin, interceptors: [bearer] });
  return createClient(PlanService, transport);
}

/** What the page shows of a failed call: the code, the ErrorInfo reason, the message, the next action. */
export interface ShownError {
  readonly code: string;
  readonly reason: string;
  readonly message: string;
  readonly nextAction: string;
}

/** A failed call's error as the page shows it (a non-Connect error is an unknown one). */
export function shownError(error: unknown): ShownError {
  const connect = ConnectError.from(error);
  const info = connect.findDetails(ErrorInfoSchema)[0];
  return {
    code: codeName(connect.code),
    reason: info?.reason ?? "",
    message: connect.rawMessage,
    nextAction: info?.metadata.next_action ?? "",
  };
}

const CODE_NAMES = [
  "OK",
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
];

function codeName(code: number): string {
  return CODE_NAMES[code] ?? `code ${code}`;
}
