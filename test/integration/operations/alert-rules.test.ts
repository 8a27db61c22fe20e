import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { CHART, ROOT } from "../../harness/kube/helm";
import {
  alertsOf,
  chartDashboards,
  renderedRules,
  renderMonitoring,
  type RuleGroups,
  runbookAnchors,
} from "../../harness/monitoring/monitoring-chart";
import { requireBinary } from "../../harness/servers/processes";

// The chart's PrometheusRule checked by Debian's promtool (npm test installs the `prometheus`
// package): `promtool check rules` on what the chart renders, `promtool test rules` with the unit
// tests of test/prometheus/rules.test.yaml (every alert firing and not firing on synthetic series).
const UNIT_TESTS = join(ROOT, "test", "prometheus", "rules.test.yaml");

function promtool(rules: RuleGroups, command: "check" | "test"): { status: number | null; output: string } {
  requireBinary("promtool", "prometheus");
  const dir = mkdtempSync(join(tmpdir(), "taskplans-rules-"));
  try {
    writeFileSync(join(dir, "rules.yaml"), stringify(rules));
    copyFileSync(UNIT_TESTS, join(dir, "rules.test.yaml"));
    const args =
      command === "check"
        ? ["check", "rules", join(dir, "rules.yaml")]
        : ["test", "rules", join(dir, "rules.test.yaml")];
    const run = spawnSync("promtool", args, { encoding: "utf8" });
    return { status: run.status, output: `${run.stdout}${run.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("the chart's alert rules, checked and unit-tested with promtool", () => {
  const rules = renderedRules();
  const alerts = alertsOf(rules);

  it("renders neither rules nor dashboards unless turned on", () => {
    const kinds = renderMonitoring().map(
      (o) => `${String(o.kind)}/${String((o.metadata as { name: string }).name)}`,
    );
    expect(kinds).not.toContain("PrometheusRule/taskplans");
    expect(kinds).not.toContain("ConfigMap/taskplans-dashboards");
  });

  it("passes `promtool check rules` with default and production values", () => {
    const production = renderedRules("-f", join(CHART, "ci", "production-values.yaml"));
    for (const rendered of [rules, production]) {
      const check = promtool(rendered, "check");
      expect([check.status, check.output]).toEqual([0, expect.stringContaining("SUCCESS")]);
    }
  });

  it("passes `promtool test rules`: every alert fires when it should and stays quiet when it should not", () => {
    const run = promtool(rules, "test");
    expect([run.status, run.output]).toEqual([0, expect.stringContaining("SUCCESS")]);
  });

  it("takes its thresholds from values: raising one makes its firing case fail", () => {
    const raised = renderedRules("--set", "prometheusRule.causes.writeConflicts.perSecond=1");
    const run = promtool(raised, "test");
    expect(run.status).not.toBe(0);
    expect(run.output).toContain("alertname: TaskplansWriteConflictsRising");
  });

  it("has a unit test of each alert firing and of it staying quiet", () => {
    const cases = (
      parse(readFileSync(UNIT_TESTS, "utf8")) as {
        tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
      }
    ).tests.flatMap((t) => t.alert_rule_test ?? []);
    const names = [...new Set(alerts.map((a) => a.alert))];
    expect(names.length).toBeGreaterThanOrEqual(10);
    for (const name of names) {
      const own = cases.filter((c) => c.alertname === name);
      expect([name, own.some((c) => c.exp_alerts.length > 0)]).toEqual([name, true]);
      expect([name, own.some((c) => c.exp_alerts.length === 0)]).toEqual([name, true]);
    }
  });

  it("gives every alert a severity, summary, description and a runbook_url to a section of docs/runbook.md", () => {
    const anchors = runbookAnchors();
    for (const alert of alerts) {
      const { summary, description, runbook_url: url } = alert.annotations ?? {};
      expect([alert.alert, alert.labels?.severity]).toEqual([
        alert.alert,
        expect.stringMatching(/^(critical|warning)$/),
      ]);
      expect([alert.alert, summary, description]).toEqual([
        alert.alert,
        expect.any(String),
        expect.any(String),
      ]);
      const [base, anchor] = (url ?? "").split("#");
      expect([alert.alert, base]).toEqual([alert.alert, expect.stringMatching(/\/docs\/runbook\.md$/)]);
      expect([alert.alert, anchors.has(anchor ?? "")]).toEqual([alert.alert, true]);
    }
  });

  it("validates the PrometheusRule and the dashboard ConfigMap against their schemas", () => {
    const objects = renderMonitoring(
      "--set",
      "prometheusRule.enabled=true",
      "--set",
      "grafanaDashboard.enabled=true",
    ).filter(
      (o) =>
        o.kind === "PrometheusRule" || String((o.metadata as { name: string }).name).endsWith("-dashboards"),
    );
    expect(objects.map((o) => o.kind)).toEqual(["ConfigMap", "PrometheusRule"]);
    const dir = mkdtempSync(join(tmpdir(), "taskplans-manifests-"));
    try {
      writeFileSync(join(dir, "m.yaml"), objects.map((o) => JSON.stringify(o)).join("\n---\n"));
      const run = spawnSync(
        process.execPath,
        [join(ROOT, "scripts", "validate-manifests.mjs"), join(dir, "m.yaml")],
        {
          encoding: "utf8",
        },
      );
      expect([run.status, run.stdout]).toEqual([0, expect.not.stringContaining("INVALID")]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const [configMap] = objects as [
      { data: Record<string, string>; metadata: { labels: Record<string, string> } },
    ];
    expect(configMap.metadata.labels.grafana_dashboard).toBe("1");
    const shipped = chartDashboards()[0];
    expect(JSON.parse(configMap.data["taskplans-overview.json"] ?? "")).toEqual(shipped);
  });

  it("ships a dashboard whose every panel queries the service's series through the release's variables", () => {
    for (const dashboard of chartDashboards()) {
      expect(dashboard.panels.length).toBeGreaterThanOrEqual(12);
      for (const panel of dashboard.panels) {
        expect([panel.title, panel.targets.length > 0]).toEqual([panel.title, true]);
        for (const { expr } of panel.targets)
          expect([panel.title, expr]).toEqual([panel.title, expect.stringContaining('job=~"$job"')]);
      }
    }
  });
});
