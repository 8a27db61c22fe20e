/* global process, console */
// Validates rendered Kubernetes manifests (multi-document YAML files given as arguments) against
// the Kubernetes API schemas shipped in `kubernetes-models` (and the prometheus-operator and
// cert-manager models for ServiceMonitor and Certificate), offline. Prints one line per object; exits 1 if any object is invalid.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

const MODULES = {
  v1: "kubernetes-models/v1",
  "apps/v1": "kubernetes-models/apps/v1",
  "batch/v1": "kubernetes-models/batch/v1",
  "policy/v1": "kubernetes-models/policy/v1",
  "autoscaling/v2": "kubernetes-models/autoscaling/v2",
  "networking.k8s.io/v1": "kubernetes-models/networking.k8s.io/v1",
  "monitoring.coreos.com/v1": "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1",
  "cert-manager.io/v1": "@kubernetes-models/cert-manager/cert-manager.io/v1",
};

let failures = 0;
for (const file of process.argv.slice(2)) {
  for (const document of parseAllDocuments(readFileSync(file, "utf8"))) {
    if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0].message}`);
    const object = document.toJS();
    if (!object) continue;
    const label = `${object.apiVersion}/${object.kind} ${object.metadata?.name ?? "?"}`;
    try {
      const module = MODULES[object.apiVersion];
      if (!module) throw new Error(`no schema known for apiVersion ${object.apiVersion}`);
      const Model = (await import(module))[object.kind];
      if (!Model) throw new Error(`no schema known for kind ${object.kind}`);
      new Model(object).validate();
      console.log(`valid   ${label}`);
    } catch (error) {
      failures++;
      console.log(`INVALID ${label}: ${error.message}`);
    }
  }
}
process.exit(failures === 0 ? 0 : 1);
