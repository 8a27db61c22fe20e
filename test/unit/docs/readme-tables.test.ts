import { status } from "@grpc/grpc-js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CODE_OF_REASON } from "../../../src/grpc/error-mapping";

// The API tables (docs/api.md) are derived from the contract: every RPC of the proto services has a row
// (and no row names an RPC that does not exist), and every reason of the error catalogue is listed
// under the code it maps to (and no other reason is listed).
const ROOT = join(__dirname, "..", "..", "..");
const readme = readFileSync(join(ROOT, "docs", "api.md"), "utf8");

function section(from: string, to: string): string[] {
  const start = readme.indexOf(from);
  return readme
    .slice(start, readme.indexOf(to, start))
    .split("\n")
    .filter((line) => line.startsWith("| "));
}

function rpcsOfProto(): string[] {
  const dir = join(ROOT, "proto", "taskplans", "v1");
  const rpcs: string[] = [];
  for (const file of ["plan_service.proto", "task.proto"]) {
    const text = readFileSync(join(dir, file), "utf8");
    for (const [, service, body] of text.matchAll(/^service (\w+) \{([\s\S]*?)^\}/gm)) {
      for (const [, rpc] of (body ?? "").matchAll(/^\s*rpc (\w+)\(/gm)) rpcs.push(`${service}.${rpc}`);
    }
  }
  return rpcs.sort();
}

describe("the API tables of docs/api.md", () => {
  it("list every RPC of the proto services, one row each, and nothing else", () => {
    const rows = section("| RPC ", "Write RPCs answer").slice(2);
    const documented = rows.map((row) => /^\| `(\w+\.\w+)`/.exec(row)?.[1] ?? row).sort();
    expect(rpcsOfProto().length).toBeGreaterThan(12);
    expect(documented).toEqual(rpcsOfProto());
  });

  it("list every error reason under the code it maps to, and no other reason", () => {
    const rows = section("| code ", "Both tables are checked").slice(2);
    const documented = rows.flatMap((row) => {
      const [, code = "", reasons = ""] = row.split("|").map((cell) => cell.trim());
      return [...reasons.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map(([, reason]) => `${reason} -> ${code}`);
    });
    const catalogue = Object.entries(CODE_OF_REASON).map(([reason, code]) => `${reason} -> ${status[code]}`);
    expect(documented.sort()).toEqual([...catalogue, "INTERNAL -> INTERNAL"].sort());
  });
});
