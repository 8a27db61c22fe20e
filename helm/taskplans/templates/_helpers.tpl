{{- define "taskplans.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "taskplans.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "taskplans.selectorLabels" -}}
app.kubernetes.io/name: {{ include "taskplans.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "taskplans.labels" -}}
{{ include "taskplans.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* Labels of the chart's Job and test pods: deliberately not the selector labels, so neither the
Services nor the PodDisruptionBudget ever pick them up as serving replicas. */}}
{{- define "taskplans.auxiliaryLabels" -}}
app.kubernetes.io/part-of: {{ include "taskplans.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end -}}

{{- define "taskplans.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "taskplans.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "taskplans.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* Environment shared by the pods and the migration Job: ConfigMap, chart Secret, existing secrets. */}}
{{- define "taskplans.env" -}}
- name: PLAN_GRPC_ADDRESS
  value: "0.0.0.0:{{ .Values.service.grpcPort }}"
- name: PLAN_METRICS_ADDRESS
  value: "0.0.0.0:{{ .Values.service.metricsPort }}"
- name: PLAN_HTTP_ADDRESS
  value: {{ if .Values.http.enabled }}"0.0.0.0:{{ .Values.service.httpPort }}"{{ else }}""{{ end }}
- name: PLAN_MIGRATE_ON_START
  valueFrom:
    configMapKeyRef:
      name: {{ include "taskplans.fullname" . }}
      key: PLAN_MIGRATE_ON_START
{{- if .Values.tls.enabled }}
- name: PLAN_GRPC_TLS_CERT_FILE
  value: /var/run/secrets/taskplans/tls/tls.crt
- name: PLAN_GRPC_TLS_KEY_FILE
  value: /var/run/secrets/taskplans/tls/tls.key
{{- if .Values.tls.clientAuth.enabled }}
- name: PLAN_GRPC_TLS_CLIENT_CA_FILE
  value: {{ include "taskplans.clientCaFile" . }}
{{- end }}
{{- if .Values.tls.metrics }}
- name: PLAN_METRICS_TLS_CERT_FILE
  value: /var/run/secrets/taskplans/tls/tls.crt
- name: PLAN_METRICS_TLS_KEY_FILE
  value: /var/run/secrets/taskplans/tls/tls.key
{{- end }}
{{- end }}
{{- range $key, $value := .Values.config }}
{{- if ne (toString $value) "" }}
- name: {{ $key }}
  valueFrom:
    configMapKeyRef:
      name: {{ include "taskplans.fullname" $ }}
      key: {{ $key }}
{{- end }}
{{- end }}
{{- $existing := dict "PLAN_DATABASE_URL" .Values.existingSecrets.database "PLAN_REDIS_URLS" .Values.existingSecrets.redis "PLAN_AUTH_JWT_SECRET" .Values.existingSecrets.auth }}
{{- range $key, $value := .Values.secrets }}
{{- $ref := dict }}
{{- if hasKey $existing $key }}{{- $ref = get $existing $key }}{{- end }}
{{- if $ref.name }}
- name: {{ $key }}
  valueFrom:
    secretKeyRef:
      name: {{ $ref.name }}
      key: {{ $ref.key }}
{{- else if ne (toString $value) "" }}
- name: {{ $key }}
  valueFrom:
    secretKeyRef:
      name: {{ include "taskplans.fullname" $ }}
      key: {{ $key }}
{{- end }}
{{- end }}
{{- end -}}

{{/* "true" when MySQL is configured (chart secret or existing secret). */}}
{{- define "taskplans.mysql" -}}
{{- if or .Values.existingSecrets.database.name .Values.secrets.PLAN_DATABASE_URL -}}true{{- end -}}
{{- end -}}

{{/* "true" when the migration Job runs (only for MySQL: SQLite is per pod). */}}
{{- define "taskplans.migrationJob" -}}
{{- if and .Values.migrations.enabled (include "taskplans.mysql" .) -}}true{{- end -}}
{{- end -}}

{{/* Refuses configurations that would not serialize writes across replicas. */}}
{{- define "taskplans.validate" -}}
{{- $many := or (gt (int .Values.replicaCount) 1) .Values.autoscaling.enabled -}}
{{- if and $many (not (include "taskplans.mysql" .)) -}}
{{- fail "more than one replica needs MySQL: set secrets.PLAN_DATABASE_URL or existingSecrets.database" -}}
{{- end -}}
{{- if and .Values.tls.enabled (not (or .Values.tls.secretName .Values.tls.certManager.enabled)) -}}
{{- fail "tls.enabled needs tls.secretName (a kubernetes.io/tls Secret) or tls.certManager.enabled" -}}
{{- end -}}
{{- if and .Values.tls.certManager.enabled (not .Values.tls.certManager.issuerRef.name) -}}
{{- fail "tls.certManager.enabled needs tls.certManager.issuerRef.name" -}}
{{- end -}}
{{- if and (or .Values.tls.clientAuth.enabled .Values.tls.metrics) (not .Values.tls.enabled) -}}
{{- fail "tls.clientAuth and tls.metrics need tls.enabled" -}}
{{- end -}}
{{- if and $many (not (or .Values.existingSecrets.redis.name .Values.secrets.PLAN_REDIS_URLS)) -}}
{{- fail "more than one replica needs Redis for the per-task lock: set secrets.PLAN_REDIS_URLS or existingSecrets.redis" -}}
{{- end -}}
{{- end -}}

{{/* The Secret holding tls.crt, tls.key and ca.crt. */}}
{{- define "taskplans.tlsSecret" -}}
{{- .Values.tls.secretName | default (printf "%s-tls" (include "taskplans.fullname" .)) -}}
{{- end -}}

{{/* The CA bundle client certificates are checked against (mTLS). */}}
{{- define "taskplans.clientCaFile" -}}
{{- if .Values.tls.clientAuth.caSecretName -}}
/var/run/secrets/taskplans/client-ca/ca.crt
{{- else -}}
/var/run/secrets/taskplans/tls/ca.crt
{{- end -}}
{{- end -}}

{{/* The name the certificate is checked against by the probes and helm test. */}}
{{- define "taskplans.serverName" -}}
{{- .Values.tls.serverName | default (include "taskplans.fullname" .) -}}
{{- end -}}

{{/* The image's health check with the chart's TLS files, as a JSON list (for exec commands). */}}
{{- define "taskplans.healthcheckTls" -}}
{{- $args := list "--cacert" "/var/run/secrets/taskplans/tls/ca.crt" "--server-name" (include "taskplans.serverName" .) -}}
{{- if .Values.tls.clientAuth.enabled -}}
{{- $args = concat $args (list "--cert" "/var/run/secrets/taskplans/tls/tls.crt" "--key" "/var/run/secrets/taskplans/tls/tls.key") -}}
{{- end -}}
{{- toJson $args -}}
{{- end -}}

{{/* An exec probe of the image's health check over TLS, for `service` ("" for the whole server). */}}
{{- define "taskplans.execProbe" -}}
{{- $root := index . 0 -}}
{{- $command := concat (list "node" "dist/src/bin/healthcheck.js" "--health-service" (index . 1)) (include "taskplans.healthcheckTls" $root | fromJsonArray) (list (printf "127.0.0.1:%v" $root.Values.service.grpcPort)) -}}
exec: { command: {{ toJson $command }} }
timeoutSeconds: {{ $root.Values.probes.execTimeoutSeconds }}
{{- end -}}

{{/* The TLS volumes of a pod (the Secret, and a separate client CA when named). Modes in decimal
(292 = 0444): YAML 1.2 readers take a leading zero as decimal, the API server as octal. */}}
{{- define "taskplans.tlsVolumes" -}}
{{- if .Values.tls.enabled -}}
- name: tls
  secret: { secretName: {{ include "taskplans.tlsSecret" . }}, defaultMode: 292 }
{{- if .Values.tls.clientAuth.caSecretName }}
- name: client-ca
  secret: { secretName: {{ .Values.tls.clientAuth.caSecretName }}, defaultMode: 292, items: [{ key: ca.crt, path: ca.crt }] }
{{- end }}
{{- end }}
{{- end -}}

{{- define "taskplans.tlsVolumeMounts" -}}
{{- if .Values.tls.enabled -}}
- { name: tls, mountPath: /var/run/secrets/taskplans/tls, readOnly: true }
{{- if .Values.tls.clientAuth.caSecretName }}
- { name: client-ca, mountPath: /var/run/secrets/taskplans/client-ca, readOnly: true }
{{- end }}
{{- end }}
{{- end -}}
