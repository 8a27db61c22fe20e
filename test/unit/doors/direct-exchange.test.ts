import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { compressionBrotli, compressionGzip } from "@connectrpc/connect-node";
import { directStreamExchange } from "../../../src/http/connect-stream";
import { directExchange } from "../../../src/http/connect-unary";

// Which requests the HTTP door serves on its direct path (src/http/connect-unary.ts); the rest are
// Connect's router's. http-door-direct.test.ts holds the two to the same answers.
const READ = MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS;
const WRITE = MethodOptions_IdempotencyLevel.IDEMPOTENCY_UNKNOWN;
// What the HTTP listener offers (connect-handler.ts).
const OFFERED = [compressionGzip, compressionBrotli];

describe("directExchange", () => {
  it("takes a plain Connect unary POST, JSON or binary", () => {
    expect(directExchange(WRITE, OFFERED, "POST", { "content-type": "application/json" }, "")).toEqual({
      binary: false,
      query: null,
    });
    expect(
      directExchange(WRITE, OFFERED, "POST", { "content-type": "application/json; charset=utf-8" }, ""),
    ).toEqual({
      binary: false,
      query: null,
    });
    expect(directExchange(WRITE, OFFERED, "POST", { "content-type": "application/proto" }, "")).toEqual({
      binary: true,
      query: null,
    });
    expect(
      directExchange(
        WRITE,
        OFFERED,
        "POST",
        { "content-type": "application/json", "content-encoding": "identity" },
        "",
      ),
    ).not.toBeNull();
  });

  it("takes a request that accepts a compressed answer (the direct path compresses it as the router would)", () => {
    const json = { "content-type": "application/json" };
    expect(
      directExchange(WRITE, OFFERED, "POST", { ...json, "accept-encoding": "gzip, deflate, br" }, ""),
    ).not.toBeNull();
    expect(
      directExchange(READ, OFFERED, "GET", { "accept-encoding": "gzip" }, "?encoding=json&message=%7B%7D"),
    ).not.toBeNull();
  });

  it("leaves a compressed request, streams, gRPC-Web and other media types to the router", () => {
    const json = { "content-type": "application/json" };
    expect(directExchange(WRITE, OFFERED, "POST", { ...json, "content-encoding": "gzip" }, "")).toBeNull();
    // A compression the router does not offer: it refuses it (unimplemented), so it is the router's.
    expect(directExchange(WRITE, OFFERED, "POST", { ...json, "content-encoding": "zstd" }, "")).toBeNull();
    expect(
      directExchange(WRITE, OFFERED, "POST", { "content-type": "application/connect+json" }, ""),
    ).toBeNull();
    expect(
      directExchange(WRITE, OFFERED, "POST", { "content-type": "application/grpc-web+proto" }, ""),
    ).toBeNull();
    expect(directExchange(WRITE, OFFERED, "POST", { "content-type": "text/plain" }, "")).toBeNull();
    expect(directExchange(WRITE, OFFERED, "POST", {}, "")).toBeNull();
    expect(directExchange(WRITE, OFFERED, "PUT", json, "")).toBeNull();
  });

  it("takes a GET of a read with encoding json or proto and no compression", () => {
    const get = directExchange(READ, OFFERED, "GET", {}, "?encoding=json&message=%7B%7D");
    expect(get?.binary).toBe(false);
    expect(get?.query?.get("message")).toBe("{}");
    expect(directExchange(READ, OFFERED, "GET", {}, "?encoding=proto&base64=1&message=")?.binary).toBe(true);
    expect(directExchange(READ, OFFERED, "GET", {}, "?encoding=json&compression=gzip&message=x")).toBeNull();
    expect(directExchange(READ, OFFERED, "GET", {}, "?message=%7B%7D")).toBeNull();
    expect(directExchange(READ, OFFERED, "GET", {}, "?encoding=xml&message=%7B%7D")).toBeNull();
    expect(directExchange(WRITE, OFFERED, "GET", {}, "?encoding=json&message=%7B%7D")).toBeNull();
  });
});

describe("directStreamExchange", () => {
  it("takes a Connect streaming POST, JSON or binary, without message compression", () => {
    expect(directStreamExchange(OFFERED, "POST", { "content-type": "application/connect+json" })).toEqual({
      binary: false,
    });
    expect(directStreamExchange(OFFERED, "POST", { "content-type": "application/connect+proto" })).toEqual({
      binary: true,
    });
    expect(
      directStreamExchange(OFFERED, "POST", {
        "content-type": "application/connect+json",
        "connect-content-encoding": "identity",
        "accept-encoding": "gzip",
      }),
    ).toEqual({ binary: false });
  });

  it("leaves compressed messages, gRPC-Web, unary media types and other methods to the router", () => {
    const stream = { "content-type": "application/connect+json" };
    expect(
      directStreamExchange(OFFERED, "POST", { ...stream, "connect-accept-encoding": "gzip" }),
    ).toBeNull();
    expect(directStreamExchange(OFFERED, "POST", { ...stream, "connect-content-encoding": "br" })).toBeNull();
    expect(directStreamExchange(OFFERED, "POST", { "content-type": "application/grpc-web+json" })).toBeNull();
    expect(directStreamExchange(OFFERED, "POST", { "content-type": "application/json" })).toBeNull();
    expect(directStreamExchange(OFFERED, "GET", stream)).toBeNull();
  });
});
