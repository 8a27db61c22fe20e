import { mkdtempSync, readFileSync, rmSync } from "node:fs";
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
} from "../harness/client-packages";
import { type CertFiles, makeCa, type TestCa } from "../harness/pki";
import { requireBinary, runToExit } from "../harness/processes";
import { randomId, startTestApp, type TestApp } from "../harness/test-app";

// One live server (auth on, so every client's token handling is exercised) called by the Go, Python
// and TypeScript client packages, each installed as a back end outside the repository would install it.
const ROOT = resolve(__dirname, "../..");
const SECRET = "conformance-secret-0123456789-0123456789";
const GOLDEN = join(ROOT, "clients/conformance/transcript.txt");

function token(expiresInSeconds: number): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ kind: "agent", name: "conformance", workspaces: ["ws-conformance"] })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject("conformance")
    .setIssuedAt(now - 7200)
    .setExpirationTime(now + expiresInSeconds)
    .sign(new TextEncoder().encode(SECRET));
}

describe("client packages: Go, Python and TypeScript against one live server", () => {
  let app: TestApp;
  let mutual: TestApp;
  let ca: TestCa;
  let caller: CertFiles;
  let work: string;
  let tokens: { valid: string; expired: string };
  let packed: Awaited<ReturnType<typeof packTsClient>>;
  const programs: Record<string, string[]> = {};
  const python: Record<string, PythonEnv> = {};

  beforeAll(async () => {
    requireBinary("go", "golang (or Go from https://go.dev/dl)");
    requireBinary("python3", "python3 python3-venv");
    work = mkdtempSync(join(tmpdir(), "taskplans-clients-"));
    app = await startTestApp("sqlite", { env: { PLAN_AUTH_JWT_SECRET: SECRET } });
    // The same service over mTLS: a certificate for a DNS name only, so every client sets the name.
    ca = makeCa(work, "clients-ca");
    const served = ca.issue("served", { names: ["plans.internal"] });
    caller = ca.issue("caller");
    mutual = await startTestApp("sqlite", {
      env: {
        PLAN_AUTH_JWT_SECRET: SECRET,
        PLAN_GRPC_TLS_CERT_FILE: served.certFile,
        PLAN_GRPC_TLS_KEY_FILE: served.keyFile,
        PLAN_GRPC_TLS_CLIENT_CA_FILE: ca.certFile,
      },
    });
    tokens = { valid: await token(3600), expired: await token(-3600) };
    packed = await packTsClient(work);
    const dir = (name: string) => mkdtempSync(join(work, `${name}-`));
    const [ts, go, oldest, current] = await Promise.all([
      prepareTsConsumer(dir("ts"), packed.tarball),
      prepareGoConsumer(dir("go")),
      preparePythonEnv("clients-oldest", "clients/python/requirements-oldest.txt", dir("py-oldest")),
      preparePythonEnv("clients-current", "clients/python/requirements-current.txt", dir("py-current")),
    ]);
    const script = join(ROOT, "clients/conformance/python/conformance.py");
    Object.assign(programs, {
      typescript: ts,
      go,
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

  it("every client prints the same conformance transcript, and it is the recorded one", async () => {
    const transcripts: Record<string, string> = {};
    for (const [language, argv] of Object.entries(programs)) {
      // Each run uses a task of its own; the programs print it as <task>.
      const env = { ...serverEnv(), TASKPLANS_TASK_ID: randomId("conformance") };
      transcripts[language] = await run(argv, { env, cwd: work, timeoutMs: 120_000 });
    }
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
    expect(golden.trimEnd().split("\n")).toHaveLength(50);
  });

  it("every client prints the same transcript over mTLS, dialled with its package's TLS option", async () => {
    const tls = {
      TASKPLANS_TARGET: `127.0.0.1:${mutual.port}`,
      TASKPLANS_TLS_CA: ca.certFile,
      TASKPLANS_TLS_CERT: caller.certFile,
      TASKPLANS_TLS_KEY: caller.keyFile,
      TASKPLANS_TLS_SERVER_NAME: "plans.internal",
    };
    const golden = readFileSync(GOLDEN, "utf8");
    for (const [language, argv] of Object.entries(programs)) {
      const env = { ...serverEnv(), ...tls, TASKPLANS_TASK_ID: randomId("conformance") };
      expect({ language, transcript: await run(argv, { env, cwd: work, timeoutMs: 120_000 }) }).toEqual({
        language,
        transcript: golden,
      });
    }
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
      },
      cwd: work,
      timeoutMs: 120_000,
    });
    expect(language).toBe("typescript");
    expect(`${refused.stdout}${refused.stderr}`.split("\n")[0]).toMatch(/UNAVAILABLE/);
  });

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
    expect(out).toMatch(/6 passed/);
  });

  it("the npm package holds only the client: compiled code, types, its manifest and README", () => {
    const unexpected = packed.files.filter(
      (path) => !/^dist\/.+\.(js|d\.ts)$/.test(path) && path !== "package.json" && path !== "README.md",
    );
    expect(unexpected).toEqual([]);
    // Of the server's tree, only the contract's rich-status module is compiled in.
    const server = packed.files.filter((path) => path.startsWith("dist/src/"));
    expect(server).toEqual(["dist/src/contract/rich-status.d.ts", "dist/src/contract/rich-status.js"]);
    const manifest = JSON.parse(readFileSync(join(ROOT, "clients/ts/package.json"), "utf8"));
    const main = String(manifest.main).replace(/^\.\//, "");
    const types = String(manifest.types).replace(/^\.\//, "");
    expect(packed.files).toEqual(expect.arrayContaining([main, types, "README.md"]));
    expect(manifest.exports["."]).toEqual({ types: `./${types}`, default: `./${main}` });
    expect(Object.keys(manifest.dependencies)).toEqual(["@bufbuild/protobuf"]);
    expect(Object.keys(manifest.peerDependencies)).toEqual(["@grpc/grpc-js"]);
  });
});
