import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PlanServiceService, RPC_KINDS, TaskServiceService } from "@taskplans/contract";
import { WRITE_METHODS } from "../../../src/grpc/call-scope";

// The proto's rpc_kind option is the one source of what each RPC is (issue 55): generated into the
// server's tables, the TypeScript client, the chart's SLO methods and docs/slo.md; the Go, Python
// and Java clients' retry tables are idiomatic code of their own, so this test holds them to it.
const ROOT = join(__dirname, "..", "..", "..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const sorted = (names: Iterable<string>) => [...names].sort();

const unary = Object.entries(RPC_KINDS).filter(([, kind]) => !kind.streaming);
const retried = sorted(unary.filter(([, kind]) => kind.retriable).map(([method]) => method));
const withRequestId = sorted(unary.filter(([, kind]) => kind.requestId).map(([method]) => method));
const pascal = (camel: string) => camel[0]?.toUpperCase() + camel.slice(1);

describe("the kind of each RPC, from the proto's rpc_kind option", () => {
  it("covers every RPC of both services, and no other", () => {
    const rpcs = [...Object.values(PlanServiceService), ...Object.values(TaskServiceService)].map(
      (definition) => definition.path.split("/")[2] ?? "",
    );
    expect(sorted(Object.keys(RPC_KINDS))).toEqual(sorted(rpcs));
  });

  it("gives every read and write an SLO class, or none with its reason", () => {
    for (const [method, kind] of Object.entries(RPC_KINDS)) {
      const counted = kind.slo !== "none";
      expect([method, counted || kind.sloReason.length > 0]).toEqual([method, true]);
      if (kind.access === "write")
        expect([method, kind.slo === "write" || kind.slo === "none"]).toEqual([method, true]);
    }
  });

  it("the chart's SLO rules count every read and write that has an objective", () => {
    const yaml = read("helm/taskplans/slo-methods.yaml");
    const list = (key: string) =>
      sorted((new RegExp(`^${key}: "([^"]*)"$`, "m").exec(yaml)?.[1] ?? "").split("|"));
    const where = (pick: (kind: (typeof RPC_KINDS)[string]) => boolean) =>
      sorted(Object.keys(RPC_KINDS).filter((method) => pick(RPC_KINDS[method]!)));
    expect(list("readAvailability")).toEqual(
      where((kind) => kind.slo === "read" || kind.slo === "read_bulk"),
    );
    expect(list("readLatency")).toEqual(where((kind) => kind.slo === "read"));
    expect(list("writes")).toEqual(where((kind) => kind.slo === "write"));
    for (const method of ["GetPlanChanges", "DiffPlanRevisions", "ListTasks", "ExportTask"])
      expect(list("readAvailability")).toContain(method);
  });

  it("the server's write table is the rate-limited writes, with what their refusal did not do", () => {
    expect(sorted(WRITE_METHODS.keys())).toEqual(
      sorted(Object.keys(RPC_KINDS).filter((method) => RPC_KINDS[method]!.rateLimited)),
    );
    expect(WRITE_METHODS.get("CreateTask")).toBe("Task was not created");
    expect(WRITE_METHODS.get("EditPlan")).toBe("Plan was not changed");
  });

  it("the Go client retries exactly the retriable calls, and sets a request_id on exactly those that take one", () => {
    const go = read("clients/go/retry.go");
    const mapOf = (name: string) => {
      const block = new RegExp(`${name} = map\\[string\\]bool\\{([^}]*)\\}`).exec(go)?.[1] ?? "";
      return [...block.matchAll(/_(\w+)_FullMethodName/g)].map((m) => m[1] ?? "");
    };
    expect(sorted([...mapOf("retriedReads"), ...mapOf("retriedWrites")])).toEqual(retried);
    expect(sorted(mapOf("retriedWrites"))).toEqual(withRequestId);
  });

  it("the Python client too", () => {
    const python = read("clients/python/src/taskplans/retry.py");
    const namesIn = (name: string) => {
      const start = python.indexOf(`${name}: FrozenSet[str] =`);
      const block = python.slice(start, python.indexOf("\n\n", start));
      return [...block.matchAll(/"(\w+)"/g)].map((m) => m[1] ?? "");
    };
    expect(sorted(namesIn("RETRIED_METHODS").concat(namesIn("REQUEST_ID_METHODS")))).toEqual(retried);
    expect(sorted(namesIn("REQUEST_ID_METHODS"))).toEqual(withRequestId);
  });

  it("the Java client too", () => {
    const java = read("clients/java/src/main/java/dev/taskplans/client/TaskPlansClient.java");
    const calls = [
      ...java.matchAll(/unary\(shared\.\w+, \w+ServiceBlockingStub::(\w+), request, (true|false)\)/g),
    ];
    expect(sorted(calls.map((m) => pascal(m[1] ?? "")))).toEqual(sorted(unary.map(([method]) => method)));
    expect(sorted(calls.filter((m) => m[2] === "true").map((m) => pascal(m[1] ?? "")))).toEqual(retried);
  });
});
