{{/*
The helpers of the project-v4-with-plugins chart, yours to change. The templates that `make helm` writes from
config/ use them to name what they install after the release.
*/}}

{{/*
The chart's name, or nameOverride: the app.kubernetes.io/name label.
*/}}
{{- define "project-v4-with-plugins.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The release's full name: fullnameOverride, else the release's name when it holds the chart's
name (release "project-v4-with-plugins" gives the names config/default gives), else "<release>-project-v4-with-plugins".
At most 63 characters, the limit of many Kubernetes names.
*/}}
{{- define "project-v4-with-plugins.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The name of one of the release's objects: the full name, then "-" and .suffix (what follows
config/default's namePrefix in the object's name, e.g. "controller-manager"). The full name is
shortened, not the suffix, so that names stay apart and within 63 characters.
Call it with (dict "suffix" "controller-manager" "context" $).
*/}}
{{- define "project-v4-with-plugins.resourceName" -}}
{{- $room := sub 62 (len .suffix) | int }}
{{- $base := include "project-v4-with-plugins.fullname" .context | trunc $room | trimSuffix "-" }}
{{- printf "%s-%s" $base .suffix | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The manager's ServiceAccount: the chart's own when serviceAccount.enabled, else the existing
one that serviceAccount.name names ("default" for the namespace's default ServiceAccount).
*/}}
{{- define "project-v4-with-plugins.serviceAccountName" -}}
{{- if .Values.serviceAccount.enabled }}
{{- include "project-v4-with-plugins.resourceName" (dict "suffix" "controller-manager" "context" .) }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.enabled is false (\"default\" names the namespace's default ServiceAccount)" .Values.serviceAccount.name }}
{{- end }}
{{- end }}
