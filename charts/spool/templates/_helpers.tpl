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

{{/* The operator's ServiceAccount: serviceAccount.name, else the release's operator name. */}}
{{- define "spool.serviceAccountName" -}}
{{- default (include "spool.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{/*
An image reference with global.imageRegistry in front when set (as a subchart's parent sets it
for every chart). Call with (dict "root" $ "image" .Values.image).
*/}}
{{- define "spool.image" -}}
{{- $repository := .image.repository -}}
{{- with .root.Values.global.imageRegistry -}}
{{- $repository = printf "%s/%s" (trimSuffix "/" .) $repository -}}
{{- end -}}
{{- printf "%s:%s" $repository (.image.tag | default .root.Chart.AppVersion) -}}
{{- end -}}

{{/* imagePullSecrets: global.imagePullSecrets, then the chart's own. */}}
{{- define "spool.imagePullSecrets" -}}
{{- $all := concat (.Values.global.imagePullSecrets | default list) (.Values.imagePullSecrets | default list) -}}
{{- with $all }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end -}}
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
{{/* The Secret of the chart etcd's CA and server/peer certificate (etcd.tls.enabled). */}}
{{- define "spool.etcdTlsSecret" -}}
{{- printf "%s-tls" (include "spool.etcdName" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{/* The chart etcd's client URLs, comma-separated: every member's stable name. */}}
{{- define "spool.etcdEndpoints" -}}
{{- $etcd := include "spool.etcdName" . -}}
{{- $scheme := ternary "https" "http" .Values.etcd.tls.enabled -}}
{{- if gt (int .Values.etcd.replicas) 1 -}}
{{- $urls := list -}}
{{- range $i := until (int .Values.etcd.replicas) -}}
{{- $urls = append $urls (printf "%s://%s-%d.%s.%s.svc:2379" $scheme $etcd $i $etcd $.Release.Namespace) -}}
{{- end -}}
{{- join "," $urls -}}
{{- else -}}
{{- printf "%s://%s.%s.svc:2379" $scheme $etcd .Release.Namespace -}}
{{- end -}}
{{- end -}}
