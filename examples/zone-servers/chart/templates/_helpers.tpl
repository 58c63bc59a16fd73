{{- define "zs.zone" -}}{{ .Release.Name }}-zone{{- end -}}
{{- define "zs.gate" -}}{{ .Release.Name }}-gate{{- end -}}
{{- define "zs.db" -}}{{ .Release.Name }}-db{{- end -}}
{{- define "zs.config" -}}{{ .Release.Name }}-config{{- end -}}
{{- define "zs.labels" -}}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: zone-servers
{{- end -}}
