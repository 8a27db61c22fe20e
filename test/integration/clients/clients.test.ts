import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { SignJWT } from "jose";
import {
  packTsClient,
  prepareGoConsumer,
  preparePythonEnv,
  prepareTsConsumer,
  run,
  type PythonEnv,
} from "../../harness/packages/client-packages";
import { type FailoverSetup, runConversation, startFailoverTarget } from "../../harness/packages/conformance";
import { prepareJavaConsumer, testJavaClient } from "../../harness/packages/java-package";
import { testPythonPackage } from "../../harness/packages/python-package";
import { type CertFiles, makeCa, type TestCa } from "../../harness/identity/pki";
import { requireBinary, runToExit } from "../../harness/servers/processes";
import { randomId, startTestApp, type TestApp } from "../../harness/servers/test-app";

// One live server (auth on, so every client's token handling is exercised) called by the Go, Java, Python
// and TypeScript client packages, each installed as a back end outside the repository would install it.
const ROOT = resolve(__dirname, "../../..");
const SECRET = "conformance-secret-0123456789-0123456789";
const GOLDEN = join(ROOT, "clients/conformance/transcript.txt");

async function expiring(expiresInSeconds: number): Promise<{ token: string; exp: number }> {
  const now = Math.floor(Date.now() / 1000);
  const exp = now + expiresInSeconds;
  const signed = await new SignJWT({ kind: "agent", name: "conformance", workspaces: ["ws-conformance"] })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject("conformance")
    .setIssuedAt(now - 7200)
    .setExpirationTime(exp)
    .sign(new TextEncoder().encode(SECRET));
  return { token: signed, exp };
}
const token = async (expiresInSeconds: number) => (await expiring(expiresInSeconds)).token;

// The servers check expiry to the second, so that the scenario's short token expires when it says.
const AUTH = { PLAN_AUTH_JWT_SECRET: SECRET, PLAN_AUTH_CLOCK_SKEW_MS: "0" };

// CONFORMANCE_LANGUAGES=go,java runs only those programs (while working on one package), and
// CONFORMANCE_OUT=<dir> keeps each transcript there as <language>.txt.
const only = (process.env.CONFORMANCE_LANGUAGES ?? "").split(",").filter(Boolean);
const chosen = (language: string) => only.length === 0 || only.some((name) => language.startsWith(name));

describe("client packages: Go, Java, Python and TypeScript against one live server", () => {
  let app: TestApp;
  let mutual: TestApp;
  let ca: TestCa;
  let caller: CertFiles;
  let served: CertFiles;
  let work: string;
  let tokens: { valid: string; expired: string };
  let packed: Awaited<ReturnType<typeof packTsClient>>;
  const programs: Record<string, string[]> = {};
  const python: Record<string, PythonEnv> = {};

  beforeAll(async () => {
    requireBinary("go", "golang (or Go from https://go.dev/dl)");
    requireBinary("python3", "python3 python3-venv");
    work = mkdtempSync(join(tmpdir(), "taskplans-clients-"));
    // MariaDB: the resilience steps need a second replica on the same database.
    app = await startTestApp("mysql", { env: AUTH });
    // The same service over mTLS: a certificate for a DNS name only, so every client sets the name.
    ca = makeCa(work, "clients-ca");
    served = ca.issue("served", { names: ["plans.internal"] });
    caller = ca.issue("caller");
    mutual = await startTestApp("mysql", {
      env: {
        ...AUTH,
        PLAN_GRPC_TLS_CERT_FILE: served.certFile,
        PLAN_GRPC_TLS_KEY_FILE: served.keyFile,
        PLAN_GRPC_TLS_CLIENT_CA_FILE: ca.certFile,
      },
    });
    tokens = { valid: await token(3600), expired: await token(-3600) };
    packed = await packTsClient(work);
    const dir = (name: string) => mkdtempSync(join(work, `${name}-`));
    const [ts, go, java, oldest, current] = await Promise.all([
      prepareTsConsumer(dir("ts"), packed),
      prepareGoConsumer(dir("go")),
      prepareJavaConsumer(dir("java")),
      preparePythonEnv("clients-oldest", "clients/python/requirements-oldest.txt", dir("py-oldest")),
      preparePythonEnv("clients-current", "clients/python/requirements-current.txt", dir("py-current")),
    ]);
    const script = join(ROOT, "clients/conformance/python/conformance.py");
    Object.assign(programs, {
      typescript: ts,
      go,
      java,
      "python (oldest supported grpcio/protobuf)": [oldest.python, script],
      "python (current grpcio/protobuf)": [current.python, script],
    });
    Object.assign(python, { oldest, current });
  }, 900_000);
  afterAll(async () => {
    await app?.stop();
    await mutual?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const serverEnv = () => ({
    TASKPLANS_TARGET: `127.0.0.1:${app.port}`,
    TASKPLANS_TOKEN: tokens.valid,
    TASKPLANS_EXPIRED_TOKEN: tokens.expired,
  });

  /**
   * Runs one program through the whole scenario against `server`, with a second replica of it (same
   * database, `replicaEnv`) behind the failover proxy, answering its stdin lines.
   */
  async function conformance(
    argv: string[],
    server: TestApp,
    env: Record<string, string>,
    setup: Pick<FailoverSetup, "replicaEnv" | "replicaTls" | "tls">,
  ): Promise<string> {
    const task = randomId("conformance"); // each run has a task of its own, printed as <task>
    const failover = await startFailoverTarget({
      ...setup,
      mainTarget: env.TASKPLANS_TARGET ?? "",
      token: tokens.valid,
      replicaEnv: { ...AUTH, PLAN_DATABASE_URL: server.databaseUrl, ...setup.replicaEnv },
      logDir: work,
      shortToken: expiring,
    });
    try {
      const transcript = await runConversation(argv, {
        env: { ...process.env, ...env, TASKPLANS_TASK_ID: task, TASKPLANS_FAILOVER_TARGET: failover.target },
        cwd: work,
        timeoutMs: 180_000,
        answer: (line) => failover.answer(line, task),
      });
      expect(failover.events).toEqual([
        "the append committed and its answer was held back",
        "killed (SIGKILL); connections go to the other replica",
        "stopped (SIGTERM); connections go to the other replica",
        "short token sent",
      ]);
      return transcript;
    } finally {
      await failover.stop();
    }
  }

  /** Each chosen program's transcript, three at a time (they mostly wait: on restarts, on a token's expiry). */
  async function transcriptsOf(runOne: (argv: string[]) => Promise<string>): Promise<Record<string, string>> {
    const queue = Object.entries(programs).filter(([language]) => chosen(language));
    const transcripts: Record<string, string> = {};
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) transcripts[next[0]] = await runOne(next[1]);
    };
    await Promise.all([worker(), worker(), worker()]);
    return transcripts;
  }

  it("every client prints the same conformance transcript, and it is the recorded one", async () => {
    const transcripts = await transcriptsOf((argv) =>
      conformance(argv, app, serverEnv(), { replicaEnv: {} }),
    );
    const out = process.env.CONFORMANCE_OUT;
    if (out)
      for (const [language, transcript] of Object.entries(transcripts))
        writeFileSync(join(out, `${language.split(" ")[0]}.txt`), transcript);
    const golden = readFileSync(GOLDEN, "utf8");
    const differing = Object.entries(transcripts).filter(([, transcript]) => transcript !== golden);
    expect(differing.map(([language]) => language)).toEqual([]); // names the language, then the diff
    for (const [language, transcript] of Object.entries(transcripts)) {
      expect({ language, transcript }).toEqual({ language, transcript: golden });
    }
    // The scenario reaches what it says it reaches (so a program that prints nothing cannot pass).
    expect(golden).toContain("stale_replace: ABORTED VERSION_MISMATCH");
    expect(golden).toContain('restore: OK status="RESTORE_STATUS_RESTORED"');
    expect(golden).toContain('watch_history: OK kinds="REVERTED,UPDATED,REVERTED,IMPLEMENTATION_STARTED"');
    expect(golden).toContain("retried_append_applied: OK version=10 occurrences=1");
    expect(golden).toContain('watch_resumed: OK kind="UPDATED" version=11');
    expect(golden).toContain('token_provider_refreshed: OK version=11 provider_calls=2 token="refreshed"');
    expect(golden).toContain("changes_since: OK version=12 since_version=11 old_bytes=72 new_bytes=81");
    expect(golden).toContain(
      'merged_edit: OK version=13 revision=6 coalesced=false bytes=89 merged="11..12"',
    );
    expect(golden).toContain('merge_conflict: ABORTED MERGE_CONFLICT base_version="11" conflict_regions="1"');
    expect(golden).toContain(
      "merge_conflict_typed: OK base_version=11 current_version=13 conflict_regions=1",
    );
    expect(golden).toContain("changes_ahead_typed: OK version=100 current_version=13");
    expect(golden).toContain('diff_revisions: OK from=5 to=6 to_merged="11..12"');
    expect(golden).toContain("import_not_operator: PERMISSION_DENIED IMPORT_NOT_PERMITTED");
    expect(golden.trimEnd().split("\n")).toHaveLength(75);
  }, 900_000);

  it("every client prints the same transcript over mTLS, dialled with its package's TLS option", async () => {
    const tls = {
      TASKPLANS_TARGET: `127.0.0.1:${mutual.port}`,
      TASKPLANS_TLS_CA: ca.certFile,
      TASKPLANS_TLS_CERT: caller.certFile,
      TASKPLANS_TLS_KEY: caller.keyFile,
      TASKPLANS_TLS_SERVER_NAME: "plans.internal",
    };
    const golden = readFileSync(GOLDEN, "utf8");
    const replicaEnv = {
      PLAN_GRPC_TLS_CERT_FILE: served.certFile,
      PLAN_GRPC_TLS_KEY_FILE: served.keyFile,
      PLAN_GRPC_TLS_CLIENT_CA_FILE: ca.certFile,
    };
    const replicaTls = { ca: readFileSync(ca.certFile), serverName: "plans.internal", client: caller };
    const clientTls = {
      caFile: ca.certFile,
      certFile: caller.certFile,
      keyFile: caller.keyFile,
      serverName: "plans.internal",
    };
    const env = { ...serverEnv(), ...tls };
    const transcripts = await transcriptsOf((argv) =>
      conformance(argv, mutual, env, { replicaEnv, replicaTls, tls: clientTls }),
    );
    for (const [language, transcript] of Object.entries(transcripts))
      expect({ language, transcript }).toEqual({ language, transcript: golden });
    // The same program without a client certificate is refused in the handshake, at its first step.
    const [language, argv] = Object.entries(programs)[0] ?? ["", []];
    const refused = await runToExit(argv, {
      env: {
        ...process.env,
        ...serverEnv(),
        ...tls,
        TASKPLANS_TLS_CERT: "",
        TASKPLANS_TLS_KEY: "",
        TASKPLANS_TASK_ID: randomId("conformance"),
        TASKPLANS_FAILOVER_TARGET: tls.TASKPLANS_TARGET, // never reached
      },
      cwd: work,
      // Only its first line counts: every later step is refused the same way, reads after retries.
      timeoutMs: 10_000,
    });
    expect(language).toBe("typescript");
    expect(`${refused.stdout}${refused.stderr}`.split("\n")[0]).toMatch(/UNAVAILABLE/);
  }, 900_000);

  it("go vet and go test pass in clients/go against the server", async () => {
    const env = { TASKPLANS_TEST_TARGET: `127.0.0.1:${app.port}`, TASKPLANS_TEST_TOKEN: tokens.valid };
    await run(["go", "vet", "./..."], { cwd: join(ROOT, "clients/go") });
    const out = await run(["go", "test", "-count=1", "-v", "./..."], { cwd: join(ROOT, "clients/go"), env });
    expect(out).toMatch(/--- PASS: TestReasonsOfARejectedWrite/);
    expect(out).not.toMatch(/--- FAIL/);
  });

  it.each(["oldest", "current"])("pytest passes on the %s supported grpcio and protobuf", async (which) => {
    const env = python[which];
    if (!env) throw new Error(`no ${which} Python environment`);
    const versions = await run([
      env.python,
      "-c",
      "import grpc, google.protobuf as p; print(grpc.__version__, p.__version__)",
    ]);
    const pinned = readFileSync(join(ROOT, `clients/python/requirements-${which}.txt`), "utf8");
    const [grpcVersion, protobufVersion] = versions.trim().split(" ");
    expect(pinned).toContain(`grpcio==${grpcVersion}\n`);
    expect(pinned).toContain(`protobuf==${protobufVersion}\n`);
    const out = await run(
      [env.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", join(ROOT, "clients/python/tests")],
      {
        env: { TASKPLANS_TEST_TARGET: `127.0.0.1:${app.port}`, TASKPLANS_TEST_TOKEN: tokens.valid },
        cwd: work,
      },
    );
    expect(out).toMatch(/\b45 passed\b/);
    expect(out).not.toMatch(/failed|error/);
  });

  it("the Python package type-checks (mypy --strict), builds, and installs from its sdist and wheel", async () => {
    const out = await testPythonPackage(mkdtempSync(join(work, "py-dev-")));
    expect(out).toMatch(/\b5 passed\b/);
    expect(out).not.toMatch(/failed|error/);
  }, 900_000);

  it("mvn test passes in clients/java (JUnit against a scripted server)", async () => {
    const out = await testJavaClient(mkdtempSync(join(work, "java-test-")));
    expect(out).toMatch(/Tests run: \d+, Failures: 0, Errors: 0, Skipped: 0\n[\s\S]*BUILD SUCCESS/);
  }, 600_000);

  it("every package carries the one version in clients/VERSION, and the changelog has its entry", () => {
    const version = readFileSync(join(ROOT, "clients/VERSION"), "utf8").trim();
    const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
    expect({
      ts: JSON.parse(read("clients/ts/package.json")).version,
      contract: JSON.parse(read("generated/package.json")).version,
      mcp: JSON.parse(read("mcp/package.json")).version,
      cli: JSON.parse(read("cli/package.json")).version,
      go: /const Version = "([^"]+)"/.exec(read("clients/go/version.go"))?.[1],
      python: /^version = "([^"]+)"/m.exec(read("clients/python/pyproject.toml"))?.[1],
      java: /<artifactId>taskplans-client<\/artifactId>[\s\S]*?<version>([^<]+)<\/version>/.exec(
        read("clients/java/pom.xml"),
      )?.[1],
    }).toEqual({
      ts: version,
      contract: version,
      mcp: version,
      cli: version,
      go: version,
      python: version,
      java: version,
    });
    expect(read("clients/CHANGELOG.md")).toContain(`\n## ${version}\n`);
  });

  it("the npm package holds only the client: compiled code, types, its manifest and README", () => {
    const unexpected = packed.files.filter(
      (path) => !/^dist\/.+\.(js|d\.ts)$/.test(path) && path !== "package.json" && path !== "README.md",
    );
    expect(unexpected).toEqual([]);
    // Nothing of the server or the contract is compiled in: the contract is a dependency.
    expect(packed.files.filter((path) => /^dist\/(src|generated|ts)\//.test(path))).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(ROOT, "clients/ts/package.json"), "utf8"));
    const main = String(manifest.main).replace(/^\.\//, "");
    const types = String(manifest.types).replace(/^\.\//, "");
    expect(packed.files).toEqual(expect.arrayContaining([main, types, "README.md"]));
    expect(manifest.exports["."]).toEqual({ types: `./${types}`, default: `./${main}` });
    expect(Object.keys(manifest.dependencies)).toEqual(["@taskplans/contract"]);
    expect(manifest.dependencies["@taskplans/contract"]).toBe(manifest.version);
    expect(Object.keys(manifest.peerDependencies)).toEqual(["@grpc/grpc-js"]);
  });
});
