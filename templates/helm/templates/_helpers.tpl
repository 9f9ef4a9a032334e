{{/*
The helpers of the <chart> chart, yours to change. The templates that `make helm` writes from
config/ use them to name what they install after the release.
*/}}

{{/*
The chart's name, or nameOverride: the app.kubernetes.io/name label.
*/}}
{{- define "<chart>.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The release's full name: fullnameOverride, else the release's name when it holds the chart's
name (release "<chart>" gives the names config/default gives), else "<release>-<chart>".
At most 63 characters, the limit of many Kubernetes names.
*/}}
{{- define "<chart>.fullname" -}}
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
{{- define "<chart>.resourceName" -}}
{{- $room := sub 62 (len .suffix) | int }}
{{- $base := include "<chart>.fullname" .context | trunc $room | trimSuffix "-" }}
{{- printf "%s-%s" $base .suffix | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The manager's ServiceAccount: the chart's own when serviceAccount.enabled, else the existing
one that serviceAccount.name names ("default" for the namespace's default ServiceAccount).
*/}}
{{- define "<chart>.serviceAccountName" -}}
{{- if .Values.serviceAccount.enabled }}
{{- include "<chart>.resourceName" (dict "suffix" "controller-manager" "context" .) }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.enabled is false (\"default\" names the namespace's default ServiceAccount)" .Values.serviceAccount.name }}
{{- end }}
{{- end }}
