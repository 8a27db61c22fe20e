import { join } from "node:path";
import { connect } from "../harness/calls/rpc";
import { WriteMode } from "@taskplans/contract";
import {
  type Backends,
  deleteNamespace,
  helmRelease,
  migrationJobEvents,
  readyPods,
  secondsSince,
  serviceTarget,
  startBackends,
  waitForReadyPods,
} from "./cluster";
import { underLoad } from "./load";

// The README's rolling-upgrade story, run: the release before the cluster tests (its chart and its
// image, from the git history; scripts/kube/images.sh builds them) holds data, then `helm upgrade`
// to this tree's chart and image migrates once and rolls the replicas under load.
const NAMESPACE = "taskplans-upgrade";
const RELEASE = "taskplans";
const SELECTOR = `app.kubernetes.io/name=taskplans,app.kubernetes.io/instance=${RELEASE}`;
const PREVIOUS_TREE = process.env.KUBE_PREVIOUS_TREE ?? "";

let backends: Backends;

beforeAll(async () => {
  if (!PREVIOUS_TREE) throw new Error("KUBE_PREVIOUS_TREE is not set: run this through npm run test:kube");
  backends = await startBackends(NAMESPACE);
}, 300_000);

afterAll(() => deleteNamespace(NAMESPACE));

it("6. schema upgrade: the previous release's chart installed with data, then helm upgrade to this one: the migration Job runs once, old data reads back, nothing lost under load", async () => {
  // The previous chart's pre-install Job could not start (it referenced objects created after the
  // hook); that release migrated at pod start instead (migrations.enabled=false), as documented.
  const start = Date.now();
  await helmRelease(
    "install",
    { namespace: NAMESPACE, release: RELEASE, chart: join(PREVIOUS_TREE, "helm", "taskplans") },
    backends,
    ["image.tag=previous", "migrations.enabled=false"],
  );
  // That chart left the count to the HPA alone: --wait returned with one replica, the HPA adds two.
  await waitForReadyPods(NAMESPACE, SELECTOR, 3);
  const installSeconds = secondsSince(start);

  const target = await serviceTarget(NAMESPACE, RELEASE);
  const client = connect(target.port, undefined, target.host);
  const written = new Map<string, { content: string; version: number; revisions: number }>();
  try {
    for (let t = 0; t < 20; t++) {
      const taskId = `old-${t}`;
      await client.tasks.createTask({ taskId, workspaceId: "ws" });
      await client.plans.createPlan({ taskId, content: `# Plan ${t}\n` });
      for (let a = 0; a < 5; a++)
        await client.plans.updatePlan({ taskId, content: `- step ${a}`, mode: WriteMode.WRITE_MODE_APPEND });
      const { plan } = await client.plans.getPlan({ taskId });
      const { revisions } = await client.plans.listPlanRevisions({ taskId });
      written.set(taskId, {
        content: plan?.content ?? "",
        version: plan?.version ?? 0,
        revisions: revisions.length,
      });
    }
  } finally {
    client.close();
  }
  const before = await readyPods(NAMESPACE, SELECTOR);
  expect(await migrationJobEvents(NAMESPACE, RELEASE)).toEqual([]);

  let upgradeSeconds = "";
  const result = await underLoad("schema upgrade", target, backends.databaseUrl, async () => {
    upgradeSeconds = await helmRelease("upgrade", { namespace: NAMESPACE, release: RELEASE }, backends);
    return `helm upgrade from ${PREVIOUS_TREE.split("release-")[1]} in ${upgradeSeconds} s`;
  });
  const after = await readyPods(NAMESPACE, SELECTOR);
  expect(after).toHaveLength(3);
  expect(after.filter((name) => before.includes(name))).toEqual([]);
  const events = await migrationJobEvents(NAMESPACE, RELEASE);
  expect(events.filter((reason) => reason === "SuccessfulCreate")).toHaveLength(1);
  expect(events.filter((reason) => reason === "Completed")).toHaveLength(1);

  const reader = connect(target.port, undefined, target.host);
  try {
    for (const [taskId, was] of written) {
      const { plan } = await reader.plans.getPlan({ taskId });
      const { revisions } = await reader.plans.listPlanRevisions({ taskId });
      expect({ content: plan?.content, version: plan?.version, revisions: revisions.length }).toEqual(was);
    }
  } finally {
    reader.close();
  }
  expect(result.ok).toBeGreaterThan(100);
  console.log(
    `[kube] schema upgrade: previous release installed in ${installSeconds} s with ${written.size} tasks; ` +
      `upgraded in ${upgradeSeconds} s, the migration Job ran once; every task read back unchanged`,
  );
});
