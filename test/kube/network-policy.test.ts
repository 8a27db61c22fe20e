import {
  type Backends,
  deleteNamespace,
  helmRelease,
  helmIn,
  kubectl,
  secondsSince,
  sleep,
  startBackends,
  waitFor,
} from "./cluster";

// The chart's NetworkPolicy, enforced (kube-router's network policy controller runs beside the
// bridge plugin, scripts/kube/up.sh): gRPC is admitted from namespaces the release names and from
// its own `helm test` pod, and from nothing else.
const NAMESPACE = "taskplans-policy";
const RELEASE = "taskplans";
const CLIENT_LABEL = "taskplans.example/client";

let backends: Backends;

beforeAll(async () => {
  backends = await startBackends(NAMESPACE);
}, 300_000);

afterAll(() => deleteNamespace(NAMESPACE));

/**
 * Runs the image's health check (a plan service health check, then a plan read, 5 s deadline)
 * against the release's Service inside the client pod; resolves whether it passed and its line.
 */
async function probeFrom(pod: string): Promise<{ ok: boolean; line: string }> {
  try {
    const out = await kubectl([
      "exec",
      "-n",
      NAMESPACE,
      pod,
      "--",
      "node",
      "dist/src/bin/healthcheck.js",
      `${RELEASE}:50051`,
    ]);
    return { ok: true, line: out.trim() };
  } catch (error) {
    const line = /failed: .*/.exec((error as Error).message)?.[0] ?? (error as Error).message;
    return { ok: false, line };
  }
}

it("7. NetworkPolicy enforced: a pod with the chart's test-pod labels is admitted, and helm test passes; a pod of a namespace the policy does not name is refused, and the same pod is admitted once its namespace carries the label", async () => {
  await helmRelease("install", { namespace: NAMESPACE, release: RELEASE }, backends, [
    `networkPolicy.clientNamespaceSelector.matchLabels.${CLIENT_LABEL.replaceAll(".", "\\.")}=yes`,
  ]);
  // The policy's rule for the chart's own test pod, judged on a long-lived pod with that pod's labels:
  // the hook's own pod calls at once after it starts, and kube-router can judge a new pod before it
  // has seen it (README, "On a real cluster").
  await kubectl([
    "run",
    "probe-like",
    "-n",
    NAMESPACE,
    "--image=localhost/taskplans:test",
    "--image-pull-policy=Never",
    "--restart=Never",
    `--labels=app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/component=release-probe`,
    "--command",
    "--",
    "sleep",
    "600",
  ]);
  await kubectl(["wait", "-n", NAMESPACE, "--for=condition=Ready", "pod/probe-like", "--timeout=60s"]);
  let probeLike = { ok: false, line: "" };
  await waitFor("the test pod's rule to admit a pod with its labels", 120_000, async () => {
    probeLike = await probeFrom("probe-like");
    return probeLike.ok;
  });

  // A long-lived client pod, so that the controller has seen it before it is judged.
  await kubectl([
    "run",
    "client",
    "-n",
    NAMESPACE,
    "--image=localhost/taskplans:test",
    "--image-pull-policy=Never",
    "--restart=Never",
    "--command",
    "--",
    "sleep",
    "600",
  ]);
  await kubectl(["wait", "-n", NAMESPACE, "--for=condition=Ready", "pod/client", "--timeout=60s"]);
  const refusals: string[] = [];
  for (let attempt = 0; attempt < 3; attempt++) {
    const probe = await probeFrom("client");
    expect(probe).toMatchObject({ ok: false });
    refusals.push(probe.line);
    await sleep(3_000);
  }

  const start = Date.now();
  await kubectl(["label", "namespace", NAMESPACE, `${CLIENT_LABEL}=yes`]);
  let admitted = { ok: false, line: "" };
  await waitFor("the labelled namespace's pod to be admitted", 120_000, async () => {
    admitted = await probeFrom("client");
    return admitted.ok;
  }).catch((error: Error) => {
    throw new Error(`${error.message}; the last attempt: ${admitted.line}`);
  });
  const admittedAfter = secondsSince(start);

  // The chart's own test pod, new and called at once: its probe repeats until the controller admits it.
  const testStart = Date.now();
  const testOutput = await helmIn(["test", RELEASE, "-n", NAMESPACE, "--logs"]);
  const testLine = /ok: .*/.exec(testOutput)?.[0];
  expect(testLine).toBeDefined();
  console.log(
    `[kube] network policy (kube-router): a pod with the test pod's labels admitted; a pod of an unlabelled namespace refused ` +
      `3 times over 9 s (${refusals[0]}); the same pod admitted ${admittedAfter} s after its namespace was labelled ` +
      `(${admitted.line}); helm test passed in ${secondsSince(testStart)} s (${testLine})`,
  );
});
