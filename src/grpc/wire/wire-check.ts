import { isUtf8 } from "node:buffer";
import { type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { RequestError } from "./request-error";

// The decoders ts-proto generates replace invalid UTF-8 with U+FFFD and fail on 64-bit numbers above
// 2^53 - 1 without naming the field, so the raw bytes are checked first, against the descriptor.
// The check runs on every call, so it allocates nothing on a well-formed request: UTF-8 is checked
// in place (isUtf8, no string made), and a field's path is built only for its error.
const MAX_DEPTH = 32;

const WIRE_OF_SCALAR: Partial<Record<ScalarType, WireType>> = {
  [ScalarType.DOUBLE]: WireType.Bit64,
  [ScalarType.FIXED64]: WireType.Bit64,
  [ScalarType.SFIXED64]: WireType.Bit64,
  [ScalarType.FLOAT]: WireType.Bit32,
  [ScalarType.FIXED32]: WireType.Bit32,
  [ScalarType.SFIXED32]: WireType.Bit32,
  [ScalarType.STRING]: WireType.LengthDelimited,
  [ScalarType.BYTES]: WireType.LengthDelimited,
};
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const SIXTY_FOUR_BIT = new Set([ScalarType.INT64, ScalarType.UINT64, ScalarType.SINT64]);

/**
 * Checks that `bytes` are a well-formed `message`: framing, wire types of known fields, UTF-8 of
 * every string field (nested messages included), and 64-bit integers within what a JavaScript
 * number holds exactly. Throws RequestError naming the field; unknown fields are skipped.
 */
export function checkWire(message: DescMessage, bytes: Uint8Array): void {
  const reader = new BinaryReader(bytes);
  try {
    walk(message, bytes, reader, bytes.length, "", 0);
  } catch (error) {
    if (error instanceof RequestError) throw error;
    throw new RequestError(
      "MALFORMED_REQUEST",
      null,
      `the request is not a valid ${message.typeName} (${String((error as Error).message)})`,
    );
  }
}

function walk(
  message: DescMessage,
  bytes: Uint8Array,
  reader: BinaryReader,
  end: number,
  prefix: string,
  depth: number,
): void {
  if (depth > MAX_DEPTH) throw malformed(prefix.slice(0, -1), "is nested too deeply");
  while (reader.pos < end) {
    const [number, wireType] = reader.tag();
    const field = fieldsByNumber(message).get(number);
    if (!field) {
      reader.skip(wireType, number);
      continue;
    }
    checkField(field, wireType, bytes, reader, prefix, depth);
  }
  if (reader.pos !== end) {
    throw prefix
      ? malformed(prefix.slice(0, -1), "is truncated")
      : new RequestError("MALFORMED_REQUEST", null, "the request is truncated");
  }
}

const BY_NUMBER = new WeakMap<DescMessage, ReadonlyMap<number, DescField>>();

function fieldsByNumber(message: DescMessage): ReadonlyMap<number, DescField> {
  let fields = BY_NUMBER.get(message);
  if (!fields) {
    fields = new Map(message.fields.map((field) => [field.number, field]));
    BY_NUMBER.set(message, fields);
  }
  return fields;
}

// `prefix`: the path of the message the field is in ("" at the top, "author." inside author).
function checkField(
  field: DescField,
  wireType: WireType,
  bytes: Uint8Array,
  reader: BinaryReader,
  prefix: string,
  depth: number,
): void {
  const path = () => `${prefix}${field.name}`;
  const scalar =
    field.fieldKind === "scalar" || (field.fieldKind === "list" && field.listKind === "scalar")
      ? field.scalar
      : undefined;
  const nested =
    field.fieldKind === "message" || (field.fieldKind === "list" && field.listKind === "message")
      ? field.message
      : undefined;
  if (nested) {
    if (wireType !== WireType.LengthDelimited) throw malformed(path(), "has the wrong wire type");
    const end = delimitedEnd(reader, path);
    walk(nested, bytes, reader, end, `${path()}.`, depth + 1);
    return;
  }
  if (scalar === ScalarType.STRING) {
    if (wireType !== WireType.LengthDelimited) throw malformed(path(), "has the wrong wire type");
    const end = delimitedEnd(reader, path);
    const text = bytes.subarray(reader.pos, end);
    reader.pos = end;
    if (!isUtf8(text)) throw new RequestError("INVALID_UTF8", path(), `field ${path()} is not valid UTF-8`);
    return;
  }
  if (scalar !== undefined && SIXTY_FOUR_BIT.has(scalar) && wireType === WireType.Varint) {
    const value = BigInt(
      scalar === ScalarType.SINT64
        ? reader.sint64()
        : scalar === ScalarType.INT64
          ? reader.int64()
          : reader.uint64(),
    );
    if (value > MAX_SAFE || value < MIN_SAFE) {
      throw new RequestError(
        "MALFORMED_REQUEST",
        path(),
        `field ${path()} is ${value}, beyond the largest supported value ${Number.MAX_SAFE_INTEGER}`,
      );
    }
    return;
  }
  const expected =
    scalar !== undefined
      ? (WIRE_OF_SCALAR[scalar] ?? WireType.Varint)
      : field.fieldKind === "map"
        ? WireType.LengthDelimited
        : WireType.Varint;
  // A repeated scalar may also arrive packed (length-delimited).
  if (wireType !== expected && !(field.fieldKind === "list" && wireType === WireType.LengthDelimited)) {
    throw malformed(path(), "has the wrong wire type");
  }
  reader.skip(wireType, field.number);
}

// Reads a length prefix; the end it names must lie inside the message.
function delimitedEnd(reader: BinaryReader, path: () => string): number {
  const length = reader.uint32(); // read first: it moves pos past the prefix
  const end = reader.pos + length;
  if (end > reader.len) throw malformed(path(), "is truncated");
  return end;
}

function malformed(path: string, what: string): RequestError {
  return new RequestError("MALFORMED_REQUEST", path, `field ${path} ${what}`);
}
