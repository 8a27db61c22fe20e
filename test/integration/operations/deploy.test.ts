/* eslint-disable @typescript-eslint/no-explicit-any -- rendered manifests are untyped JSON read field by field */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { CHART, helm, KUBE_VERSION, renderChart, ROOT } from "../../harness/kube/helm";

// The chart is rendered by the real helm binary (npm test builds it with `go install` into a cache
// outside the repository) and every rendered object is validated against the Kubernetes schemas.
interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

const render = (...args: string[]) => renderChart<K8sObject>(...args);

function validate(objects: K8sObject[]): string {
  const dir = mkdtempSync(join(tmpdir(), "taskplans-manifests-"));
  try {
    const file = join(dir, "manifests.yaml");
    writeFileSync(file, objects.map((o) => JSON.stringify(o)).join("\n---\n"));
    const run = spawnSync(process.execPath, [join(ROOT, "scripts", "validate-manifests.mjs"), file], {
      encoding: "utf8",
    });
    expect([run.status, run.stdout]).toEqual([0, expect.not.stringContaining("INVALID")]);
    return run.stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const byKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);

describe("Helm chart, checked with the real helm and the Kubernetes schemas", () => {
  const production = ["-f", join(CHART, "ci", "production-values.yaml")];

  it("passes helm lint with default and production values", () => {
    for (const values of [[], production]) {
      const lint = helm("lint", CHART, "--kube-version", KUBE_VERSION, ...values);
      expect([lint.status, lint.stdout]).toEqual([0, expect.stringContaining("0 chart(s) failed")]);
    }
  });

  it("renders default values into valid objects: one replica on the embedded database, probes on grpc.health.v1", () => {
    const objects = render();
    expect(validate(objects)).toMatch(/valid {3}apps\/v1\/Deployment/);
    const [deployment] = byKind(objects, "Deployment") as [any];
    const pod = deployment.spec.template.spec;
    const container = pod.containers[0];
    expect(deployment.spec.replicas).toBe(1);
    expect(container.livenessProbe.grpc).toEqual({ port: 50051, service: "" });
    expect(container.readinessProbe.grpc).toEqual({ port: 50051, service: "taskplans.v1.PlanService" });
    expect(container.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
    });
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001 });
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(10_000); // > PLAN_SHUTDOWN_DRAIN_MS
    expect(pod.topologySpreadConstraints.map((c: { topologyKey: string }) => c.topologyKey)).toEqual([
      "kubernetes.io/hostname",
      "topology.kubernetes.io/zone",
    ]);
    expect(pod.volumes.map((v: { name: string }) => v.name)).toEqual(["tmp", "embedded-db"]);
    expect(byKind(objects, "Service").map((s: any) => s.spec.clusterIP ?? "cluster")).toEqual([
      "cluster",
      "None",
    ]);
    expect(byKind(objects, "PodDisruptionBudget")).toHaveLength(1);
    expect(byKind(objects, "NetworkPolicy")).toHaveLength(1);
    expect(byKind(objects, "Job")).toHaveLength(0); // SQLite is per pod: nothing to migrate once
  });

  it("exposes the HTTP listener (http.enabled, on by default): container port, Service port, NetworkPolicy, helm test; off, none of them", () => {
    const portsOf = (objects: any[]) => {
      const [deployment] = byKind(objects, "Deployment") as [any];
      const container = deployment.spec.template.spec.containers[0];
      const [service] = byKind(objects, "Service") as [any];
      const [policy] = byKind(objects, "NetworkPolicy") as [any];
      const testPod = objects.find((o) => o.metadata.annotations?.["helm.sh/hook"] === "test") as any;
      return {
        env: container.env.find((e: { name: string }) => e.name === "PLAN_HTTP_ADDRESS")?.value,
        container: container.ports.map((p: { name: string }) => p.name),
        service: service.spec.ports.map((p: { name: string; port: number }) => `${p.name}:${p.port}`),
        policy: policy.spec.ingress.map((rule: { ports: { port: string }[] }) =>
          rule.ports.map((p) => p.port),
        ),
        probeArgs: testPod.spec.containers[0].args,
      };
    };
    const on = render();
    expect(validate(on)).toMatch(/valid {3}v1\/Service/);
    expect(portsOf(on)).toEqual({
      env: "0.0.0.0:8080",
      container: ["grpc", "metrics", "http"],
      service: ["grpc:50051", "metrics:9464", "http:8080"],
      policy: [["grpc", "http"], ["grpc", "http"], ["metrics"]],
      probeArgs: ["--retry-for", "60", "--http", "rel-taskplans:8080", "rel-taskplans:50051"],
    });
    // The chart README's Ingress example is a valid Ingress naming the Service's http port.
    const readme = readFileSync(join(CHART, "README.md"), "utf8");
    const ingress = parse(
      /```yaml\n(kind: Ingress[\s\S]*?|apiVersion: networking[\s\S]*?)```/.exec(readme)?.[1] ?? "",
    );
    expect(validate([ingress])).toMatch(/valid {3}networking.k8s.io\/v1\/Ingress/);
    expect(ingress.spec.rules[0].http.paths[0].backend.service.port).toEqual({ name: "http" });
    expect(portsOf(render("--set", "http.enabled=false"))).toEqual({
      env: "",
      container: ["grpc", "metrics"],
      service: ["grpc:50051", "metrics:9464"],
      policy: [["grpc"], ["grpc"], ["metrics"]],
      probeArgs: ["--retry-for", "60", "rel-taskplans:50051"],
    });
  });

  it("renders production values: MySQL and Redis from existing secrets, HPA, ServiceMonitor, a migration Job hook", () => {
    const objects = render(...production);
    validate(objects);
    const [deployment] = byKind(objects, "Deployment") as [any];
    const env = deployment.spec.template.spec.containers[0].env as { name: string; valueFrom?: any }[];
    expect(env.find((e) => e.name === "PLAN_DATABASE_URL")?.valueFrom.secretKeyRef).toEqual({
      name: "taskplans-mysql",
      key: "url",
    });
    expect(env.find((e) => e.name === "PLAN_REDIS_URLS")?.valueFrom.secretKeyRef).toEqual({
      name: "taskplans-redis",
      key: "urls",
    });
    // The HPA owns the count; an install starts at its minimum (later renders keep the live count).
    expect(deployment.spec.replicas).toBe(5); // ci/production-values.yaml: minReplicas 5
    // Every key of `secrets` reaches the pods, not only those with an existing-secret alternative.
    const notify = render(...production, "--set", "secrets.PLAN_CHANGES_REDIS_URL=redis://notify:6379");
    const [withNotify] = byKind(notify, "Deployment") as [any];
    const notifyEnv = withNotify.spec.template.spec.containers[0].env as { name: string; valueFrom?: any }[];
    expect(notifyEnv.find((e) => e.name === "PLAN_CHANGES_REDIS_URL")?.valueFrom.secretKeyRef).toEqual({
      name: "rel-taskplans",
      key: "PLAN_CHANGES_REDIS_URL",
    });
    expect(byKind(notify, "Secret")[0]?.stringData ?? byKind(notify, "Secret")[0]?.data).toHaveProperty(
      "PLAN_CHANGES_REDIS_URL",
    );
    expect(byKind(objects, "HorizontalPodAutoscaler")).toHaveLength(1);
    expect(byKind(objects, "ServiceMonitor")).toHaveLength(1);
    expect(byKind(objects, "Secret")).toHaveLength(0); // nothing secret rendered in plain text
    const [job] = byKind(objects, "Job") as [any];
    expect(job.metadata.annotations["helm.sh/hook"]).toBe("pre-install,pre-upgrade");
    expect(job.spec.template.spec.containers[0].command).toEqual(["node", "dist/src/bin/migrate.js"]);
    const [config] = byKind(objects, "ConfigMap");
    expect(config?.data?.PLAN_MIGRATE_ON_START).toBe("false");
  });

  it("renders chart-managed secrets and refuses several replicas without MySQL and Redis", () => {
    const objects = render(
      "--set",
      "replicaCount=3",
      "--set",
      "secrets.PLAN_DATABASE_URL=mysql://u:p@db:3306/plans",
      "--set",
      "secrets.PLAN_REDIS_URLS=redis://a:6379\\,redis://b:6379\\,redis://c:6379",
    );
    validate(objects);
    const [secret] = byKind(objects, "Secret");
    expect(Object.keys(secret?.stringData ?? {}).sort()).toEqual(["PLAN_DATABASE_URL", "PLAN_REDIS_URLS"]);
    const noDb = helm("template", "rel", CHART, "--kube-version", KUBE_VERSION, "--set", "replicaCount=3");
    expect([noDb.status, noDb.stderr]).toEqual([
      1,
      expect.stringContaining("more than one replica needs MySQL"),
    ]);
    const noRedis = helm(
      "template",
      "rel",
      CHART,
      "--kube-version",
      KUBE_VERSION,
      "--set",
      "replicaCount=3",
      "--set",
      "secrets.PLAN_DATABASE_URL=mysql://x",
    );
    expect(noRedis.stderr).toContain("needs Redis");
  });

  it("maps values 1:1 to the service's environment variables", () => {
    const values = parse(readFileSync(join(CHART, "values.yaml"), "utf8")) as {
      config: object;
      secrets: object;
    };
    const configSource = readFileSync(join(ROOT, "src", "config", "config.ts"), "utf8");
    const known = new Set(configSource.match(/PLAN_[A-Z_]+(?=:)/g));
    const charted = [...Object.keys(values.config), ...Object.keys(values.secrets)];
    for (const key of charted) expect([key, known.has(key)]).toEqual([key, true]);
    const fixedByChart = [
      "PLAN_GRPC_ADDRESS",
      "PLAN_METRICS_ADDRESS",
      "PLAN_HTTP_ADDRESS", // from http.enabled and service.httpPort
      "PLAN_MIGRATE_ON_START",
      // From the `tls` block: the mounted Secret's files.
      "PLAN_GRPC_TLS_CERT_FILE",
      "PLAN_GRPC_TLS_KEY_FILE",
      "PLAN_GRPC_TLS_CLIENT_CA_FILE",
      "PLAN_METRICS_TLS_CERT_FILE",
      "PLAN_METRICS_TLS_KEY_FILE",
    ];
    for (const key of known)
      expect([key, charted.includes(key) || fixedByChart.includes(key)]).toEqual([key, true]);
  });

  it("renders TLS: the Secret mounted read-only, exec probes of the health check over mTLS, helm test over mTLS, a cert-manager Certificate, a ServiceMonitor scraping https", () => {
    const objects = render(
      ...production,
      "--set",
      "tls.enabled=true",
      "--set",
      "tls.certManager.enabled=true",
      "--set",
      "tls.certManager.issuerRef.name=internal-ca",
      "--set",
      "tls.clientAuth.enabled=true",
      "--set",
      "tls.metrics=true",
    );
    expect(validate(objects)).toMatch(/valid {3}cert-manager\.io\/v1\/Certificate/);
    const [certificate] = byKind(objects, "Certificate") as [any];
    expect(certificate.spec.secretName).toBe("rel-taskplans-tls");
    expect(certificate.spec.dnsNames).toEqual(
      expect.arrayContaining([
        "rel-taskplans",
        "rel-taskplans.default.svc",
        "rel-taskplans-headless.default.svc",
      ]),
    );
    const [deployment] = byKind(objects, "Deployment") as [any];
    const pod = deployment.spec.template.spec;
    const container = pod.containers[0];
    expect(pod.volumes).toContainEqual({
      name: "tls",
      secret: { secretName: "rel-taskplans-tls", defaultMode: 0o444 },
    });
    expect(container.volumeMounts).toContainEqual({
      name: "tls",
      mountPath: "/var/run/secrets/taskplans/tls",
      readOnly: true,
    });
    const env = Object.fromEntries(container.env.map((v: any) => [v.name, v.value]));
    expect(env).toMatchObject({
      PLAN_GRPC_TLS_CERT_FILE: "/var/run/secrets/taskplans/tls/tls.crt",
      PLAN_GRPC_TLS_KEY_FILE: "/var/run/secrets/taskplans/tls/tls.key",
      PLAN_GRPC_TLS_CLIENT_CA_FILE: "/var/run/secrets/taskplans/tls/ca.crt",
      PLAN_METRICS_TLS_CERT_FILE: "/var/run/secrets/taskplans/tls/tls.crt",
    });
    const tlsArgs = [
      "--cacert",
      "/var/run/secrets/taskplans/tls/ca.crt",
      "--server-name",
      "rel-taskplans",
      "--cert",
      "/var/run/secrets/taskplans/tls/tls.crt",
      "--key",
      "/var/run/secrets/taskplans/tls/tls.key",
    ];
    const probe = (service: string) => [
      "node",
      "dist/src/bin/healthcheck.js",
      "--health-service",
      service,
      ...tlsArgs,
      "127.0.0.1:50051",
    ];
    expect(container.livenessProbe).toMatchObject({ exec: { command: probe("") }, timeoutSeconds: 5 });
    expect(container.startupProbe.exec.command).toEqual(probe(""));
    expect(container.readinessProbe.exec.command).toEqual(probe("taskplans.v1.PlanService"));
    const testPod = objects.find((o) => o.metadata.annotations?.["helm.sh/hook"] === "test") as any;
    expect(testPod.spec.containers[0].args).toEqual([
      "--retry-for",
      "60",
      ...tlsArgs,
      "--http",
      "rel-taskplans:8080",
      "rel-taskplans:50051",
    ]);
    expect(testPod.spec.volumes).toEqual([
      { name: "tls", secret: { secretName: "rel-taskplans-tls", defaultMode: 0o444 } },
    ]);
    const [monitor] = byKind(objects, "ServiceMonitor") as [any];
    expect(monitor.spec.endpoints[0]).toMatchObject({
      scheme: "https",
      tlsConfig: {
        serverName: "rel-taskplans",
        ca: { secret: { name: "rel-taskplans-tls", key: "ca.crt" } },
      },
    });
  });

  it("renders a separate client CA Secret for mTLS, and refuses TLS settings that name no certificate", () => {
    const objects = render(
      "--set",
      "tls.enabled=true",
      "--set",
      "tls.secretName=served",
      "--set",
      "tls.clientAuth.enabled=true",
      "--set",
      "tls.clientAuth.caSecretName=clients",
    );
    validate(objects);
    expect(byKind(objects, "Certificate")).toEqual([]);
    const [deployment] = byKind(objects, "Deployment") as [any];
    const container = deployment.spec.template.spec.containers[0];
    expect(container.env).toContainEqual({
      name: "PLAN_GRPC_TLS_CLIENT_CA_FILE",
      value: "/var/run/secrets/taskplans/client-ca/ca.crt",
    });
    expect(deployment.spec.template.spec.volumes).toContainEqual({
      name: "client-ca",
      secret: { secretName: "clients", defaultMode: 0o444, items: [{ key: "ca.crt", path: "ca.crt" }] },
    });
    const refused = (sets: string[]) =>
      helm("template", "rel", CHART, "--kube-version", KUBE_VERSION, ...sets.flatMap((s) => ["--set", s]))
        .stderr;
    expect(refused(["tls.enabled=true"])).toContain("tls.enabled needs tls.secretName");
    expect(refused(["tls.enabled=true", "tls.certManager.enabled=true"])).toContain(
      "needs tls.certManager.issuerRef.name",
    );
    expect(refused(["tls.clientAuth.enabled=true"])).toContain(
      "tls.clientAuth and tls.metrics need tls.enabled",
    );
    expect(refused(["tls.metrics=true"])).toContain("tls.clientAuth and tls.metrics need tls.enabled");
  });

  it("the validator rejects an invalid object (so a pass means something)", () => {
    const [deployment] = byKind(render(), "Deployment") as [any];
    deployment.spec.template.spec.containers[0].livenessProbe.grpc.port = "grpc";
    delete deployment.spec.selector;
    const dir = mkdtempSync(join(tmpdir(), "taskplans-manifests-"));
    writeFileSync(join(dir, "bad.yaml"), JSON.stringify(deployment));
    const run = spawnSync(
      process.execPath,
      [join(ROOT, "scripts", "validate-manifests.mjs"), join(dir, "bad.yaml")],
      { encoding: "utf8" },
    );
    rmSync(dir, { recursive: true, force: true });
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/INVALID apps\/v1\/Deployment .*selector.*port must be integer/);
  });
});

describe("Dockerfile", () => {
  const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
  const ignored = readFileSync(join(ROOT, ".dockerignore"), "utf8").split("\n").filter(Boolean);

  it("copies only files that exist and that .dockerignore does not exclude", () => {
    const sources = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) =>
      (m[1] ?? "").split(" "),
    );
    expect(sources.length).toBeGreaterThan(4);
    for (const source of sources) {
      expect([source, existsSync(join(ROOT, source))]).toEqual([source, true]);
      expect([source, ignored.includes(source)]).toEqual([source, false]);
    }
  });

  it("runs the built entry points as a non-root user under tini", () => {
    expect(dockerfile).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--"\]$/m);
    expect(dockerfile).toMatch(/^CMD \["node", "dist\/src\/bin\/main.js"\]$/m);
    expect(dockerfile).toMatch(/^USER 10001:10001$/m);
    expect(dockerfile).toMatch(/npm prune --omit=dev/);
    const entryPoints = ["main.ts", "migrate.ts", "healthcheck.ts"].map((file) =>
      join(ROOT, "src", "bin", file),
    );
    expect(entryPoints.every((file) => existsSync(file))).toBe(true);
    const build = JSON.parse(readFileSync(join(ROOT, "tsconfig.build.json"), "utf8"));
    expect(build.include).toContain("src/**/*.ts");
  });
});
