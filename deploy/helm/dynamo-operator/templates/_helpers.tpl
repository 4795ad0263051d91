{{/* Names, labels and the shared pieces of the chart. */}}

{{- define "dynamo-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "dynamo-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "dynamo-operator.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "dynamo-operator.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "dynamo-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "dynamo-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "dynamo-operator.labels" -}}
{{ include "dynamo-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: dynamo
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "dynamo-operator.serviceAccountName" -}}
{{- default (include "dynamo-operator.fullname" .) .Values.serviceAccount.name }}
{{- end }}

{{/* The namespace a restricted operator watches ("" when cluster-wide). */}}
{{- define "dynamo-operator.restrictedNamespace" -}}
{{- if .Values.namespaceRestriction.enabled }}
{{- default .Release.Namespace .Values.namespaceRestriction.namespace }}
{{- end }}
{{- end }}

{{- define "dynamo-operator.webhookServiceName" -}}
{{- printf "%s-webhook" (include "dynamo-operator.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "dynamo-operator.webhookSecretName" -}}
{{- printf "%s-webhook-server-cert" (include "dynamo-operator.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "dynamo-operator.webhookConfigurationName" -}}
{{- printf "%s-validating" (include "dynamo-operator.fullname" .) }}
{{- end }}

{{- define "dynamo-operator.mutatingWebhookConfigurationName" -}}
{{- printf "%s-mutating" (include "dynamo-operator.fullname" .) }}
{{- end }}

{{- define "dynamo-operator.plannerClusterRole" -}}
{{- printf "%s-planner" (include "dynamo-operator.fullname" .) }}
{{- end }}

{{- define "dynamo-operator.eppClusterRole" -}}
{{- printf "%s-epp" (include "dynamo-operator.fullname" .) }}
{{- end }}

{{- define "dynamo-operator.profilingClusterRole" -}}
{{- printf "%s-dgdr-profiling" (include "dynamo-operator.fullname" .) }}
{{- end }}

{{- define "dynamo-operator.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
