import { existsSync } from "node:fs";
import { join } from "node:path";
import { run } from "./client-packages";
import { requireBinary } from "../servers/processes";
import { repoRoot } from "../servers/repo-root";

/**
 * The Java client package used the way a back end outside the repository uses it: built and installed
 * into the local Maven repository (`mvn install`, as clients/java/README.md says), then the conformance
 * project (clients/conformance/java) resolves `dev.taskplans:taskplans-client:0.2.0` by its coordinates
 * and is built into one runnable jar. Both builds write into `dir`, not into the source tree.
 *
 * The local repository is Maven's own (~/.m2/repository unless settings or MAVEN_OPTS say otherwise),
 * so the third-party artifacts are downloaded once and `install` replaces the client each run.
 */
const ROOT = repoRoot();
const CLIENT_POM = join(ROOT, "clients/java/pom.xml");
const CONFORMANCE_POM = join(ROOT, "clients/conformance/java/pom.xml");
const MVN = ["mvn", "-B", "-q"];

function requireJava(): void {
  requireBinary("java", "openjdk-17-jdk-headless");
  requireBinary("mvn", "maven");
}

/**
 * Installs the client package (without compiling or running its tests; `testJavaClient` runs them) and builds the conformance program against
 * it; resolves the argv that runs the program.
 */
export async function prepareJavaConsumer(dir: string): Promise<string[]> {
  requireJava();
  await run([
    ...MVN,
    "-f",
    CLIENT_POM,
    `-Dtaskplans.buildDirectory=${join(dir, "client")}`,
    "-Dmaven.test.skip=true",
    "install",
  ]);
  const build = join(dir, "conformance");
  await run([...MVN, "-f", CONFORMANCE_POM, `-Dconformance.buildDirectory=${build}`, "package"]);
  const jar = join(build, "taskplans-conformance.jar");
  if (!existsSync(jar)) throw new Error(`mvn package made no ${jar}`);
  return ["java", "-jar", jar];
}

/** Runs the client package's unit tests (JUnit 5 against a scripted loopback server); resolves Maven's output. */
export async function testJavaClient(dir: string): Promise<string> {
  requireJava();
  // Not -q: the output ends with Surefire's "Tests run: N, Failures: 0, Errors: 0, Skipped: 0".
  return run([
    "mvn",
    "-B",
    "-f",
    CLIENT_POM,
    `-Dtaskplans.buildDirectory=${join(dir, "client-test")}`,
    "test",
  ]);
}
