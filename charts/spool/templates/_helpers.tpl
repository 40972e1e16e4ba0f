{{- define "spool.fullname" -}}
{{- printf "%s-operator" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "spool.labels" -}}
app.kubernetes.io/name: spool-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "spool.selector" -}}
app.kubernetes.io/name: spool-operator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
