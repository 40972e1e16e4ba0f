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

{{/*
"true" when a monitoring.coreos.com/v1 kind may be rendered: the API server serves it, or the
values force it. Call with (dict "root" $ "kind" "ServiceMonitor" "force" <bool>).
*/}}
{{- define "spool.monitoringApi" -}}
{{- if or .force (.root.Capabilities.APIVersions.Has (printf "monitoring.coreos.com/v1/%s" .kind)) -}}
true
{{- end -}}
{{- end -}}

{{/* Namespaces whose broker Services/pods the monitors select: the watched one, or all. */}}
{{- define "spool.brokerNamespaces" -}}
{{- if .Values.watchNamespace -}}
matchNames:
  - {{ .Values.watchNamespace }}
{{- else -}}
any: true
{{- end -}}
{{- end -}}

{{/* The chart's etcd (templates/etcd.yaml): its StatefulSet and Service share the name. */}}
{{- define "spool.etcdName" -}}
{{- printf "%s-etcd" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "spool.etcdSelector" -}}
app.kubernetes.io/name: spool-etcd
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
