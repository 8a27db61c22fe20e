import { loadConfig } from "../../../src/config/config";
import { ConfigError } from "@taskplans/tls";
import {
  hostAllowed,
  hostAllowList,
  hostNameOf,
  isLoopbackHost,
  originAllowed,
} from "../../../src/http/edge-rules";
import { LogWindow, type WindowSummary } from "../../../src/observability/log-window";

// The Host and Origin rules of the HTTP listeners (docs/http.md, "Host and Origin"), exhausted
// without a server; test/integration/doors/http-edge-rules.test.ts sends them through curl.

describe("the Host rule", () => {
  it("reads a Host header's name: lower case, without port or trailing dot; malformed is null", () => {
    expect(
      [
        "Example.COM:8080",
        "example.com.",
        "[::1]:80",
        "[::1]",
        "10.0.0.1:1",
        "a_b",
        "",
        ":80",
        "a b",
        "[x]",
        "u@h",
      ].map(hostNameOf),
    ).toEqual(["example.com", "example.com", "::1", "::1", "10.0.0.1", "a_b", null, null, null, null, null]);
  });

  it("tells loopback bind addresses apart", () => {
    expect(
      ["127.0.0.1", "127.0.0.2", "localhost", "[::1]", "::1", "::ffff:127.0.0.1"].map(isLoopbackHost),
    ).toEqual([true, true, true, true, true, true]);
    expect(["0.0.0.0", "::", "", "10.0.0.1", "plans.example.com"].map(isLoopbackHost)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it("bound to loopback, answers only the loopback names (any port) and listed names", () => {
    const allow = hostAllowList("127.0.0.1", []);
    const allowed = (host: string | undefined) => hostAllowed(host, allow);
    expect(
      ["127.0.0.1:8080", "localhost:1", "[::1]:8080", "LOCALHOST", "localhost.", undefined].map(allowed),
    ).toEqual([true, true, true, true, true, true]);
    expect(
      [
        "attacker.example",
        "attacker.example:8080",
        "10.0.0.1:8080",
        "rel-taskplans",
        "127.0.0.1.attacker.example",
        "",
      ].map(allowed),
    ).toEqual([false, false, false, false, false, false]);
    const listed = hostAllowList("127.0.0.1", ["plans.example.com", ".corp.example"]);
    expect(
      [
        "plans.example.com:443",
        "corp.example",
        "a.b.corp.example",
        "evilcorp.example",
        "plans.example.com.evil",
      ].map((host) => hostAllowed(host, listed)),
    ).toEqual([true, true, true, false, false]);
  });

  it("bound beyond loopback, also answers IP literals, single-label names and the bound name; * answers any", () => {
    const allow = hostAllowList("0.0.0.0", []);
    expect(
      ["10.244.0.7:8080", "[fd00::7]:8080", "rel-taskplans:8080", "localhost"].map((h) =>
        hostAllowed(h, allow),
      ),
    ).toEqual([true, true, true, true]);
    expect(
      ["attacker.example", "rel-taskplans.default.svc.cluster.local", "10.0.0.1.nip.io"].map((h) =>
        hostAllowed(h, allow),
      ),
    ).toEqual([false, false, false]);
    expect(hostAllowed("myhost.lan:8080", hostAllowList("myhost.lan", []))).toBe(true);
    expect(hostAllowed("attacker.example", hostAllowList("127.0.0.1", ["*"]))).toBe(true);
  });
});

describe("the Origin rule", () => {
  const host = "127.0.0.1:8080";
  const cors = ["https://editor.example.com"];
  it("lets safe methods and requests without Origin through", () => {
    for (const method of ["GET", "HEAD", "OPTIONS", "get"])
      expect(originAllowed(method, "https://attacker.example", host, cors)).toBe(true);
    expect(originAllowed("POST", undefined, host, cors)).toBe(true);
  });

  it("lets a write come from its own origin (scheme aside) or a listed one, and from nowhere else", () => {
    const post = (origin: string, to = host) => originAllowed("POST", origin, to, cors);
    expect([
      post("http://127.0.0.1:8080"),
      post("https://127.0.0.1:8080"),
      post("https://editor.example.com"),
      post("https://plans.example.com", "plans.example.com"),
      post("http://LOCALHOST:8080", "localhost:8080"),
    ]).toEqual([true, true, true, true, true]);
    expect([
      post("https://attacker.example"),
      post("null"),
      post("http://127.0.0.1:8081"),
      post("http://127.0.0.1"),
      post("http://127.0.0.1:8080/path"),
      post("not a url"),
      originAllowed("DELETE", "https://attacker.example", host, cors),
      originAllowed("POST", "http://127.0.0.1:8080", undefined, cors),
    ]).toEqual([false, false, false, false, false, false, false, false]);
  });
});

describe("PLAN_HTTP_ALLOWED_HOSTS", () => {
  it("is a list of names, domains or *; empty by default", () => {
    expect(loadConfig({}).httpAllowedHosts).toEqual([]);
    expect(
      loadConfig({ PLAN_HTTP_ALLOWED_HOSTS: " plans.example.com, .corp.example ,[fd00::1],*" })
        .httpAllowedHosts,
    ).toEqual(["plans.example.com", ".corp.example", "[fd00::1]", "*"]);
  });

  it.each([
    "plans.example.com:443",
    "https://plans.example.com",
    "plans.example.com/x",
    "*.example.com",
    "a b",
  ])("fails fast naming the variable: %s", (value) => {
    expect(() => loadConfig({ PLAN_HTTP_ALLOWED_HOSTS: value })).toThrow(ConfigError);
    expect(() => loadConfig({ PLAN_HTTP_ALLOWED_HOSTS: value })).toThrow("PLAN_HTTP_ALLOWED_HOSTS");
  });
});

describe("a log window", () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it("writes the first event at once and the rest as one line of counts when the window closes", () => {
    const firsts: string[] = [];
    const summaries: WindowSummary[] = [];
    const log = new LogWindow<string>({
      windowMs: 1000,
      maxKeys: 2,
      first: (event) => firsts.push(event),
      summary: (summary) => summaries.push(summary),
    });
    for (let i = 0; i < 10_000; i++) log.add(["a", "b", "c", "d"][i % 4] as string, `event ${i}`);
    expect([firsts, summaries]).toEqual([["event 0"], []]);
    jest.advanceTimersByTime(1000);
    expect(summaries).toEqual([{ more: 9999, byKey: { b: 2500, c: 2500, other: 4999 }, windowMs: 1000 }]);
    // A quiet window writes nothing; the next event opens a new one.
    jest.advanceTimersByTime(5000);
    log.add("a", "later");
    log.close();
    expect([firsts, summaries.length]).toEqual([["event 0", "later"], 1]);
  });
});
