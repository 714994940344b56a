{{- define "worker.resources" -}}
{{ toYaml .Values.resources }}
{{- end -}}
