{{/* Expand the name of the chart. */}}
{{- define "agones.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The fully qualified app name (63 characters at most): the release name alone when it holds the chart's. */}}
{{- define "agones.fullname" -}}
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

{{/* Chart name and version, as used by the chart label. */}}
{{- define "agones.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The labels every object carries; call with (dict "ctx" $ "component" "controller"). */}}
{{- define "agones.labels" -}}
app: {{ template "agones.name" .ctx }}
chart: {{ template "agones.chart" .ctx }}
release: {{ .ctx.Release.Name }}
heritage: {{ .ctx.Release.Service }}
{{- if .component }}
component: {{ .component }}
{{- end }}
{{- end -}}

{{/* An image reference: call with (dict "ctx" $ "image" .Values.agones.image.controller). */}}
{{- define "agones.image" -}}
{{- printf "%s/%s:%s" .ctx.Values.agones.image.registry .image.name .ctx.Values.agones.image.tag -}}
{{- end -}}

{{/* The security context every agones-py container runs with (non-root, read-only root). */}}
{{- define "agones.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop:
    - ALL
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Probes on /live and /ready: call with (dict "port" 8080 "check" .healthCheck "ready" true). */}}
{{- define "agones.probes" -}}
livenessProbe:
  httpGet:
    path: /live
    port: {{ .port }}
  initialDelaySeconds: {{ .check.initialDelaySeconds }}
  periodSeconds: {{ .check.periodSeconds }}
  failureThreshold: {{ .check.failureThreshold }}
  timeoutSeconds: {{ .check.timeoutSeconds }}
{{- if .ready }}
readinessProbe:
  httpGet:
    path: /ready
    port: {{ .port }}
  initialDelaySeconds: {{ .check.initialDelaySeconds }}
  periodSeconds: {{ .check.periodSeconds }}
  failureThreshold: {{ .check.failureThreshold }}
  timeoutSeconds: {{ .check.timeoutSeconds }}
{{- end }}
{{- end -}}

{{/* Scheduling of the system pods: priority class, dedicated-node tolerations and affinity. */}}
{{- define "agones.scheduling" -}}
{{- if .ctx.Values.agones.createPriorityClass }}
priorityClassName: {{ .ctx.Values.agones.priorityClassName }}
{{- end }}
{{- with .values.nodeSelector }}
nodeSelector:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.affinity }}
affinity:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* The pod-level security context of the system pods. */}}
{{- define "agones.podSecurityContext" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 1000
  runAsGroup: 1000
  fsGroup: 1000
  seccompProfile:
    type: RuntimeDefault
{{- end -}}

{{/* What allocating needs (extensions' allocation API and the allocator service alike). */}}
{{- define "agones.allocationRules" -}}
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create", "patch"]
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get", "list", "watch"]
- apiGroups: ["agones.dev"]
  resources: ["gameservers"]
  verbs: ["get", "list", "watch", "update", "patch"]
- apiGroups: ["multicluster.agones.dev"]
  resources: ["gameserverallocationpolicies"]
  verbs: ["get", "list", "watch"]
{{- end -}}

{{/*
The feature gates in force, as YAML (`Gate: true`): defaultfeaturegates.yaml with the gates of
.Values.agones.featureGates ("A=true&B=false") set over it; an unknown gate fails the render.
Use: {{- $gates := include "agones.featureGates" . | fromYaml }}
*/}}
{{- define "agones.featureGates" -}}
{{- $gates := .Files.Get "defaultfeaturegates.yaml" | fromYaml }}
{{- if .Values.agones.featureGates }}
{{- range splitList "&" .Values.agones.featureGates }}
{{- $f := splitn "=" 2 . }}
{{- if not (hasKey $gates $f._0) }}
{{- printf "Unknown feature gate %q" $f._0 | fail }}
{{- end }}
{{- $_ := set $gates $f._0 (has $f._1 (list "1" "t" "T" "TRUE" "true" "True")) }}
{{- end }}
{{- end }}
{{- toYaml $gates }}
{{- end -}}
