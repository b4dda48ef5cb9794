{{/* The chart's name, and the release's name for its objects. */}}
{{- define "ssobridge.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "ssobridge.fullname" -}}
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

{{- define "ssobridge.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ssobridge.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "ssobridge.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "ssobridge.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "ssobridge.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "ssobridge.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The store's driver, as the bridge reads it (sqlite by default). */}}
{{- define "ssobridge.driver" -}}
{{- (.Values.config.store | default dict).driver | default "sqlite" }}
{{- end }}

{{/*
The secrets passed as environment variables, and those mounted as files
(their file names under /etc/ssobridge/secrets, and the configuration key
that names the file).
*/}}
{{- define "ssobridge.envSecrets" -}}
sessionHashKey: SSOBRIDGE_SESSION_HASH_KEY
sessionBlockKey: SSOBRIDGE_SESSION_BLOCK_KEY
platformApiSecret: SSOBRIDGE_PLATFORM_API_SECRET
storeDsn: SSOBRIDGE_STORE_DSN
portalJwtSecret: SSOBRIDGE_PORTAL_JWT_SECRET
oidcClientSecret: SSOBRIDGE_OIDC_CLIENT_SECRET
{{- end }}

{{- define "ssobridge.fileSecrets" -}}
scimTokens: {file: scim-tokens, key: scim.token_file}
ltiKey: {file: lti-key.pem, key: lti.key_file}
samlSpKey: {file: saml-sp-key.pem, key: saml.sp_key_file}
samlSpCert: {file: saml-sp-cert.pem, key: saml.sp_cert_file}
{{- end }}

{{/* "true" when secrets.<name> is given, by value or by an existing Secret. */}}
{{- define "ssobridge.has" -}}
{{- $s := index .root.Values.secrets .name | default dict }}
{{- if or $s.value $s.existingSecret }}true{{ end }}
{{- end }}

{{/* Where secrets.<name> is: the Secret's name and the key in it. */}}
{{- define "ssobridge.secretRef" -}}
{{- $s := index .root.Values.secrets .name | default dict }}
{{- if $s.existingSecret -}}
name: {{ $s.existingSecret }}
key: {{ $s.key | default .name }}
{{- else -}}
name: {{ include "ssobridge.fullname" .root }}
key: {{ .name }}
{{- end }}
{{- end }}

{{/*
ssobridge.validate stops the render with the key and the fix when the
configuration needs a secret that is not given, or holds one it should
not (secrets never go in the ConfigMap).
*/}}
{{- define "ssobridge.validate" -}}
{{- $c := .Values.config }}
{{- $driver := include "ssobridge.driver" . }}
{{- $has := dict }}
{{- range $name, $_ := .Values.secrets }}
{{- $_ := set $has $name (eq (include "ssobridge.has" (dict "root" $ "name" $name)) "true") }}
{{- end }}
{{- if and (eq $driver "sqlite") (gt (int .Values.replicaCount) 1) }}
{{- fail "replicaCount: SQLite holds one instance; set replicaCount: 1, or config.store.driver: postgres for more" }}
{{- end }}
{{- if eq $driver "postgres" }}
{{- if not $has.storeDsn }}{{ fail "secrets.storeDsn: config.store.driver is postgres: give the database URL (postgres://user:pass@host:5432/db?sslmode=require)" }}{{ end }}
{{- end }}
{{- if or (eq $driver "postgres") (gt (int .Values.replicaCount) 1) }}
{{- if not (and $has.sessionHashKey $has.sessionBlockKey) }}{{ fail "secrets.sessionHashKey and secrets.sessionBlockKey: every instance needs the same session keys (openssl rand -hex 32, twice)" }}{{ end }}
{{- end }}
{{- $platform := $c.platform | default dict }}
{{- if and (ne ($platform.base_url | default "") "embedded") (not $has.platformApiSecret) }}
{{- fail "secrets.platformApiSecret: the Partner API credential's secret is needed (config.platform.api_key is its key)" }}
{{- end }}
{{- if and (($c.oidc | default dict).issuer) (not $has.oidcClientSecret) }}
{{- fail "secrets.oidcClientSecret: config.oidc.issuer is set: give the client's secret" }}
{{- end }}
{{- $portal := $c.portal | default dict }}
{{- if and $portal.jwt_issuer (not $portal.jwt_public_key_file) (not $has.portalJwtSecret) }}
{{- fail "secrets.portalJwtSecret: config.portal.jwt_issuer is set: give the portal's HS256 key (or config.portal.jwt_public_key_file)" }}
{{- end }}
{{- if and (($c.scim | default dict).enabled) (not $has.scimTokens) }}
{{- fail "secrets.scimTokens: config.scim.enabled is true: give the IdP's bearer token(s), one a line" }}
{{- end }}
{{- if ne $has.samlSpKey $has.samlSpCert }}
{{- fail "secrets.samlSpKey and secrets.samlSpCert: give both, or neither" }}
{{- end }}
{{- range $key, $section := dict "session" (list "hash_key" "block_key" "previous_hash_key" "previous_block_key") "platform" (list "api_secret") "portal" (list "jwt_secret") "oidc" (list "client_secret") "scim" (list "token") }}
{{- range $section }}
{{- if hasKey (index $c $key | default dict) . }}
{{- fail (printf "config.%s.%s: a secret does not belong in the ConfigMap; use secrets (see values.yaml)" $key .) }}
{{- end }}
{{- end }}
{{- end }}
{{- if and (eq $driver "postgres") (hasKey ($c.store | default dict) "dsn") }}
{{- fail "config.store.dsn: the database URL holds its password; give it as secrets.storeDsn" }}
{{- end }}
{{- end }}

{{/*
ssobridge.config is config.yaml: the values' config with what the chart
decides (addresses, the SQLite file, the mounted secrets' files).
*/}}
{{- define "ssobridge.config" -}}
{{- $c := deepCopy .Values.config }}
{{- $server := get $c "server" | default dict }}
{{- $_ := set $server "addr" ":8080" }}
{{- $_ := set $server "metrics_addr" (printf ":%d" (int .Values.metrics.port)) }}
{{- $_ := set $c "server" $server }}
{{- if eq (include "ssobridge.driver" .) "sqlite" }}
{{- $store := get $c "store" | default dict }}
{{- $_ := set $store "dsn" "/data/ssobridge.db" }}
{{- $_ := set $c "store" $store }}
{{- end }}
{{- range $name, $f := include "ssobridge.fileSecrets" . | fromYaml }}
{{- if eq (include "ssobridge.has" (dict "root" $ "name" $name)) "true" }}
{{- $section := regexReplaceAll "\\..*" $f.key "" }}
{{- $leaf := regexReplaceAll "^[^.]*\\." $f.key "" }}
{{- $s := get $c $section | default dict }}
{{- $_ := set $s $leaf (printf "/etc/ssobridge/secrets/%s" $f.file) }}
{{- $_ := set $c $section $s }}
{{- end }}
{{- end }}
{{- toYaml $c }}
{{- end }}
