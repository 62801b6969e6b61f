{{/* Names and labels. */}}
{{- define "consult.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "consult.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "consult.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "consult.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "consult.selectorLabels" -}}
app.kubernetes.io/name: {{ include "consult.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "consult.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "consult.secretName" -}}
{{- default (printf "%s-secrets" (include "consult.fullname" .)) .Values.secrets.existingSecret -}}
{{- end -}}

{{- define "consult.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "consult.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
Settings that are secrets: they may only come from the Secret (secrets.values or secrets.existingSecret),
never from `config` (a ConfigMap). Names as in docs/configuration.md.
*/}}
{{- define "consult.secretKeys" -}}
MONGODB_URI REDIS_URL PROVISIONING_CODE OIDC_CLIENT_SECRET KEY_ENCRYPTION_KEY KEY_ENCRYPTION_KEY_PREVIOUS S3_ACCESS_KEY_ID S3_SECRET_ACCESS_KEY VCS_EMBEDDED_SECRET LIVEKIT_API_KEY LIVEKIT_API_SECRET METRICS_TOKEN
{{- end -}}

{{/* Settings the chart sets per node; `config` may not set them. */}}
{{- define "consult.chartKeys" -}}
ROLES NODE_ID HOST PORT METRICS_HOST METRICS_PORT GRPC_HOST GRPC_PORT STORAGE_FS_ROOT GRPC_TLS_CERT_FILE GRPC_TLS_KEY_FILE GRPC_TLS_CA_FILE GRPC_TLS_CLIENT_AUTH KEY_ENCRYPTION_KEY_FILE KEY_ENCRYPTION_KEY_PREVIOUS_FILE SEED_DEMO
{{- end -}}

{{/* Refuses values that would put a secret in the ConfigMap or fight the chart's own settings. */}}
{{- define "consult.validate" -}}
{{- $secret := splitList " " (include "consult.secretKeys" .) -}}
{{- $chart := splitList " " (include "consult.chartKeys" .) -}}
{{- range $k, $v := .Values.config -}}
{{- if has $k $secret -}}
{{- fail (printf "config.%s is a secret: set it in secrets.values or in secrets.existingSecret, never in config (a ConfigMap)" $k) -}}
{{- end -}}
{{- if has $k $chart -}}
{{- fail (printf "config.%s is set by the chart per node; remove it from config" $k) -}}
{{- end -}}
{{- end -}}
{{- range $k, $v := .Values.secrets.values -}}
{{- if not (has $k $secret) -}}
{{- fail (printf "secrets.values.%s is not a secret setting of the service (known: %s); put other settings in config" $k (include "consult.secretKeys" $)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* True when a node with these roles opens the HTTP port. */}}
{{- define "consult.servesHttp" -}}
{{- $roles := . -}}
{{- if or (has "http" $roles) (has "hub" $roles) (has "idp" $roles) -}}true{{- end -}}
{{- end -}}
