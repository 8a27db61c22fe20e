import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { CHART, helm, KUBE_VERSION, ROOT } from "../kube/helm";

/** One rule of a PrometheusRule group (a recording rule has `record`, an alert `alert`). */
export interface Rule {
  readonly record?: string;
  readonly alert?: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}

export interface RuleGroups {
  readonly groups: { readonly name: string; readonly rules: Rule[] }[];
}

/** A Grafana dashboard as kept in the chart (the fields the tests read). */
export interface Dashboard {
  readonly uid: string;
  readonly title: string;
  readonly panels: {
    readonly title: string;
    readonly targets: { readonly expr: string; readonly refId: string }[];
  }[];
}

/** The release the rule tests render: its series carry job="taskplans", namespace="plans". */
export const RELEASE = { name: "taskplans", namespace: "plans" };

/** `helm template` of the chart as the rule tests' release, as parsed objects (throws with helm's stderr). */
export function renderMonitoring(...args: string[]): Record<string, unknown>[] {
  const out = helm(
    "template",
    RELEASE.name,
    CHART,
    "--namespace",
    RELEASE.namespace,
    "--kube-version",
    KUBE_VERSION,
    ...args,
  );
  if (out.status !== 0 || out.stderr !== "") throw new Error(`helm template failed: ${out.stderr}`);
  return parseAllDocuments(out.stdout)
    .map((d) => d.toJS() as Record<string, unknown>)
    .filter(Boolean);
}

/** The rule groups of the rendered PrometheusRule (the `spec` a Prometheus rule file holds). */
export function renderedRules(...args: string[]): RuleGroups {
  const rule = renderMonitoring("--set", "prometheusRule.enabled=true", ...args).find(
    (o) => o.kind === "PrometheusRule",
  );
  if (!rule) throw new Error("the chart rendered no PrometheusRule");
  return rule.spec as RuleGroups;
}

export const alertsOf = (rules: RuleGroups): Rule[] =>
  rules.groups.flatMap((g) => g.rules).filter((r) => r.alert !== undefined);

/** The dashboards the chart ships (dashboards/*.json), parsed. */
export function chartDashboards(): Dashboard[] {
  return ["taskplans-overview.json"].map(
    (file) => JSON.parse(readFileSync(join(CHART, "dashboards", file), "utf8")) as Dashboard,
  );
}

/** GitHub's anchors of docs/runbook.md's headings. */
export function runbookAnchors(): Set<string> {
  const text = readFileSync(join(ROOT, "docs", "runbook.md"), "utf8");
  return new Set(
    [...text.matchAll(/^#{1,6} (.+)$/gm)].map(([, heading]) =>
      (heading ?? "")
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, "")
        .replace(/ /g, "-"),
    ),
  );
}
