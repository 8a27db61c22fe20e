/**
 * Load profiles with ghz (server reflection: no proto files needed). Installs ghz with `go install`
 * when missing, starts the service locally in both modes (embedded SQLite; MariaDB + 3 Redis) or
 * uses --target, seeds the tasks, runs every profile in bench/ghz/*.json and writes the raw JSON
 * and a markdown summary (rps, p50/p90/p99, status distribution) under bench/ghz/results/.
 *
 *   npm run bench:ghz                         # local, both modes
 *   npm run bench:ghz -- --target host:port   # an existing deployment (seeds it first)
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { createDatabase, startMariaDb } from "../../test/harness/databases/mariadb";
import { startRedisNodes } from "../../test/harness/databases/redis";
import { startReplica } from "../../test/harness/servers/replica";
import { seed } from "./seed";

const GHZ_VERSION = "v0.121.0";
const ROOT = join(__dirname, "..", "..", "..");
const PROFILES = join(ROOT, "bench", "ghz");

interface GhzReport {
  count: number;
  rps: number;
  latencyDistribution: { percentage: number; latency: number }[] | null;
  statusCodeDistribution: Record<string, number>;
  errorDistribution: Record<string, number> | null;
}

function ghzBinary(): string {
  const cache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "taskplans", "bin");
  const found = spawnSync("sh", ["-c", "command -v ghz"], { encoding: "utf8" }).stdout.trim();
  if (found) return found;
  if (!existsSync(join(cache, "ghz"))) {
    process.stderr.write(`installing ghz ${GHZ_VERSION} into ${cache}\n`);
    execFileSync("go", ["install", `github.com/bojand/ghz/cmd/ghz@${GHZ_VERSION}`], {
      env: { ...process.env, GOBIN: cache, GOFLAGS: "-buildvcs=false" },
      stdio: "inherit",
    });
  }
  return join(cache, "ghz");
}

function runProfiles(ghz: string, target: string, label: string, outDir: string): string[] {
  const rows: string[] = [];
  for (const file of readdirSync(PROFILES)
    .filter((f) => f.endsWith(".json"))
    .sort()) {
    const raw = join(outDir, `${label}-${file}`);
    spawnSync(ghz, ["--config", join(PROFILES, file), "--format", "json", "--output", raw, target], {
      stdio: "inherit",
    });
    const report = JSON.parse(readFileSync(raw, "utf8")) as GhzReport;
    const at = (p: number) =>
      ((report.latencyDistribution ?? []).find((d) => d.percentage === p)?.latency ?? 0) / 1e6;
    const statuses = Object.entries(report.statusCodeDistribution ?? {})
      .map(([code, n]) => `${code} ${n}`)
      .join(", ");
    rows.push(
      `| ${label} | ${file.replace(".json", "")} | ${report.count} | ${report.rps.toFixed(0)} | ${at(50).toFixed(1)} | ${at(90).toFixed(1)} | ${at(99).toFixed(1)} | ${statuses} |`,
    );
  }
  return rows;
}

async function main(): Promise<void> {
  const ghz = ghzBinary();
  const stamp = new Date().toISOString().slice(0, 19).replace(/[:T]/g, "-");
  const outDir = join(PROFILES, "results", stamp);
  mkdirSync(outDir, { recursive: true });
  const header = [
    "| mode | profile | calls | rps | p50 ms | p90 ms | p99 ms | status codes |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |",
  ];
  const rows: string[] = [];
  const targetIndex = process.argv.indexOf("--target");
  if (targetIndex > 0) {
    const target = process.argv[targetIndex + 1] ?? "";
    await seed(target);
    rows.push(...runProfiles(ghz, target, "target", outDir));
  } else {
    const logs = mkdtempSync(join(tmpdir(), "taskplans-ghz-"));
    try {
      const embedded = await startReplica(
        { PLAN_DATABASE_URL: `sqlite:${join(logs, "plans.sqlite")}` },
        logs,
      );
      await seed(`127.0.0.1:${embedded.port}`);
      rows.push(...runProfiles(ghz, `127.0.0.1:${embedded.port}`, "embedded", outDir));
      await embedded.stop();
      const mariadb = await startMariaDb();
      const nodes = await startRedisNodes(3);
      try {
        await createDatabase(mariadb.port, "ghz");
        const server = await startReplica(
          { PLAN_DATABASE_URL: mariadb.urlFor("ghz"), PLAN_REDIS_URLS: nodes.map((n) => n.url).join(",") },
          logs,
        );
        await seed(`127.0.0.1:${server.port}`);
        rows.push(...runProfiles(ghz, `127.0.0.1:${server.port}`, "mariadb+redis", outDir));
        await server.stop();
      } finally {
        for (const node of nodes) await node.stop();
        await mariadb.stop();
      }
    } finally {
      rmSync(logs, { recursive: true, force: true });
    }
  }
  const summary = [`# ghz run ${stamp}`, "", ...header, ...rows, ""].join("\n");
  writeFileSync(join(outDir, "summary.md"), summary);
  process.stdout.write(summary);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
