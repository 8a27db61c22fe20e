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
- name: PLAN_MIGRATE_ON_START
  valueFrom:
    configMapKeyRef:
      name: {{ include "taskplans.fullname" . }}
      key: PLAN_MIGRATE_ON_START
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
{{- if and $many (not (or .Values.existingSecrets.redis.name .Values.secrets.PLAN_REDIS_URLS)) -}}
{{- fail "more than one replica needs Redis for the per-task lock: set secrets.PLAN_REDIS_URLS or existingSecrets.redis" -}}
{{- end -}}
{{- end -}}
