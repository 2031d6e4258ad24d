{{- define "cricket.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "cricket.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "cricket.tokenSecret" -}}
{{- default (printf "%s-token" (include "cricket.fullname" .)) .Values.auth.existingSecret -}}
{{- end -}}

{{/* The server's address as the probes inside the pod reach it. */}}
{{- define "cricket.localAddress" -}}
{{- printf "127.0.0.1:%d" (int .Values.server.port) -}}
{{- end -}}
