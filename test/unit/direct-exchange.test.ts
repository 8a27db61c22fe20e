import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { directStreamExchange } from "../../src/http/connect-stream";
import { directExchange } from "../../src/http/connect-unary";

// Which requests the HTTP door serves on its direct path (src/http/connect-unary.ts); the rest are
// Connect's router's. http-door-direct.test.ts holds the two to the same answers.
const READ = MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS;
const WRITE = MethodOptions_IdempotencyLevel.IDEMPOTENCY_UNKNOWN;

describe("directExchange", () => {
  it("takes a plain Connect unary POST, JSON or binary", () => {
    expect(directExchange(WRITE, "POST", { "content-type": "application/json" }, "")).toEqual({
      binary: false,
      query: null,
    });
    expect(directExchange(WRITE, "POST", { "content-type": "application/json; charset=utf-8" }, "")).toEqual({
      binary: false,
      query: null,
    });
    expect(directExchange(WRITE, "POST", { "content-type": "application/proto" }, "")).toEqual({
      binary: true,
      query: null,
    });
    expect(
      directExchange(
        WRITE,
        "POST",
        { "content-type": "application/json", "content-encoding": "identity" },
        "",
      ),
    ).not.toBeNull();
  });

  it("leaves compression either way, streams, gRPC-Web and other media types to the router", () => {
    const json = { "content-type": "application/json" };
    expect(directExchange(WRITE, "POST", { ...json, "accept-encoding": "gzip" }, "")).toBeNull();
    expect(directExchange(WRITE, "POST", { ...json, "accept-encoding": "br;q=1" }, "")).toBeNull();
    expect(directExchange(WRITE, "POST", { ...json, "content-encoding": "gzip" }, "")).toBeNull();
    expect(directExchange(WRITE, "POST", { "content-type": "application/connect+json" }, "")).toBeNull();
    expect(directExchange(WRITE, "POST", { "content-type": "application/grpc-web+proto" }, "")).toBeNull();
    expect(directExchange(WRITE, "POST", { "content-type": "text/plain" }, "")).toBeNull();
    expect(directExchange(WRITE, "POST", {}, "")).toBeNull();
    expect(directExchange(WRITE, "PUT", json, "")).toBeNull();
  });

  it("takes a GET of a read with encoding json or proto and no compression", () => {
    const get = directExchange(READ, "GET", {}, "?encoding=json&message=%7B%7D");
    expect(get?.binary).toBe(false);
    expect(get?.query?.get("message")).toBe("{}");
    expect(directExchange(READ, "GET", {}, "?encoding=proto&base64=1&message=")?.binary).toBe(true);
    expect(directExchange(READ, "GET", {}, "?encoding=json&compression=gzip&message=x")).toBeNull();
    expect(directExchange(READ, "GET", {}, "?message=%7B%7D")).toBeNull();
    expect(directExchange(READ, "GET", {}, "?encoding=xml&message=%7B%7D")).toBeNull();
    expect(directExchange(WRITE, "GET", {}, "?encoding=json&message=%7B%7D")).toBeNull();
  });
});

describe("directStreamExchange", () => {
  it("takes a Connect streaming POST, JSON or binary, without message compression", () => {
    expect(directStreamExchange("POST", { "content-type": "application/connect+json" })).toEqual({
      binary: false,
    });
    expect(directStreamExchange("POST", { "content-type": "application/connect+proto" })).toEqual({
      binary: true,
    });
    expect(
      directStreamExchange("POST", {
        "content-type": "application/connect+json",
        "connect-content-encoding": "identity",
        "accept-encoding": "gzip",
      }),
    ).toEqual({ binary: false });
  });

  it("leaves compressed messages, gRPC-Web, unary media types and other methods to the router", () => {
    const stream = { "content-type": "application/connect+json" };
    expect(directStreamExchange("POST", { ...stream, "connect-accept-encoding": "gzip" })).toBeNull();
    expect(directStreamExchange("POST", { ...stream, "connect-content-encoding": "br" })).toBeNull();
    expect(directStreamExchange("POST", { "content-type": "application/grpc-web+json" })).toBeNull();
    expect(directStreamExchange("POST", { "content-type": "application/json" })).toBeNull();
    expect(directStreamExchange("GET", stream)).toBeNull();
  });
});
