import { Client, credentials, Metadata, type ServiceError } from "@grpc/grpc-js";
import { decodeStatusDetails, type StatusDetails } from "@taskplans/client";

/** What a raw call got back: the response headers, the response bytes, or the error with its decoded rich details. */
export interface RawOutcome {
  readonly headers: Metadata | null;
  readonly response: Buffer | null;
  readonly error: ServiceError | null;
  readonly details: StatusDetails | null;
}

/**
 * Sends `bytes` as the request of `path` (e.g. "/taskplans.v1.PlanService/UpdatePlan") without any
 * encoding, for inputs the generated client cannot produce (invalid UTF-8, truncated messages).
 */
export function rawCall(
  port: number,
  path: string,
  bytes: Buffer,
  metadata = new Metadata(),
): Promise<RawOutcome> {
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  const identity = (value: Buffer) => value;
  let headers: Metadata | null = null;
  return new Promise((resolve) => {
    const call = client.makeUnaryRequest(path, identity, identity, bytes, metadata, (error, response) => {
      client.close();
      resolve({
        headers,
        response: response ?? null,
        error: error ?? null,
        details: error ? decodeStatusDetails(error.metadata) : null,
      });
    });
    call.on("metadata", (received: Metadata) => (headers = received));
  });
}

/** Protobuf wire encoding by hand: a varint. */
export function varint(value: bigint | number): Buffer {
  let rest = BigInt(value);
  const bytes: number[] = [];
  do {
    const low = Number(rest & 0x7fn);
    rest >>= 7n;
    bytes.push(rest > 0n ? low | 0x80 : low);
  } while (rest > 0n);
  return Buffer.from(bytes);
}

/** A length-delimited field (wire type 2) holding exactly these bytes. */
export function bytesField(number: number, payload: Buffer): Buffer {
  return Buffer.concat([varint((number << 3) | 2), varint(payload.length), payload]);
}

/** A varint field (wire type 0). */
export function varintField(number: number, value: bigint | number): Buffer {
  return Buffer.concat([varint(number << 3), varint(value)]);
}
