package helmcheck

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/ssobridge/ssobridge/app"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/scim"
	"github.com/ssobridge/ssobridge/wayin/lti"
	"github.com/ssobridge/ssobridge/wayin/oidc"
	"github.com/ssobridge/ssobridge/wayin/portal"
	"github.com/ssobridge/ssobridge/wayin/samlsso"
)

const chartDir = "../../deploy/helm/ssobridge"

// drain is the bridge's own stop: launches in flight get 65 s after SIGTERM
// (docs/deploy.md, "Rolling a version").
const drain = 65

// imageEnv is what the image sets (Dockerfile ENV): the container's env
// comes on top of it.
var imageEnv = []string{"SSOBRIDGE_SERVER_ADDR=:8080", "SSOBRIDGE_STORE_DSN=/data/ssobridge.db", "SSOBRIDGE_LOG_FORMAT=json"}

// rendered is one scenario's objects, by kind.
type rendered struct {
	values      map[string]any
	deployment  *appsv1.Deployment
	service     *corev1.Service
	configMap   *corev1.ConfigMap
	secret      *corev1.Secret // the chart's own, when it keeps any
	pdb         *policyv1.PodDisruptionBudget
	ingress     *networkingv1.Ingress
	monitor     *monitoringv1.ServiceMonitor
	pvc         *corev1.PersistentVolumeClaim
	serviceAcct *corev1.ServiceAccount
}

func render(t *testing.T, values map[string]any) rendered {
	t.Helper()
	ms, err := Render(chartDir, values)
	require.NoError(t, err)
	r := rendered{values: values}
	for _, m := range ms {
		obj, err := Decode(m.YAML)
		require.NoError(t, err, "%s:\n%s", m.Template, m.YAML)
		switch o := obj.(type) {
		case *appsv1.Deployment:
			r.deployment = o
		case *corev1.Service:
			r.service = o
		case *corev1.ConfigMap:
			r.configMap = o
		case *corev1.Secret:
			r.secret = o
		case *policyv1.PodDisruptionBudget:
			r.pdb = o
		case *networkingv1.Ingress:
			r.ingress = o
		case *monitoringv1.ServiceMonitor:
			r.monitor = o
		case *corev1.PersistentVolumeClaim:
			r.pvc = o
		case *corev1.ServiceAccount:
			r.serviceAcct = o
		}
	}
	require.NotNil(t, r.deployment, "no Deployment")
	require.NotNil(t, r.service, "no Service")
	require.NotNil(t, r.configMap, "no ConfigMap")
	return r
}

// scenarios are the ci/ values files: every one is rendered and checked.
func scenarios(t *testing.T) map[string]map[string]any {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chartDir, "ci", "*-values.yaml"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 3, "ci/ holds a values file per scenario")
	out := map[string]map[string]any{}
	for _, f := range files {
		v, err := ValuesFile(f)
		require.NoError(t, err)
		out[strings.TrimSuffix(filepath.Base(f), "-values.yaml")] = v
	}
	return out
}

// scenarioChecks are what every scenario's rendered objects must hold.
var scenarioChecks = []struct {
	name  string
	check func(*testing.T, rendered)
}{
	{"selectors", checkSelectors},
	{"security context", checkSecurityContext},
	{"probes on the bridge's routes", checkProbes},
	{"grace above the drain", checkGrace},
	{"memory limit", checkMemoryLimit},
	{"every secret the configuration needs is there", checkSecrets},
	{"writable paths", checkWritablePaths},
	{"budget", checkBudget},
	{"ingress", checkIngress},
}

func TestEveryScenarioRendersValidObjects(t *testing.T) {
	for name, values := range scenarios(t) {
		t.Run(name, func(t *testing.T) {
			r := render(t, values)
			for _, c := range scenarioChecks {
				t.Run(c.name, func(t *testing.T) { c.check(t, r) })
			}
		})
	}
}

// checkSelectors: the Deployment, the Service, the budget and the
// ServiceMonitor select what they are for.
func checkSelectors(t *testing.T, r rendered) {
	pod := r.deployment.Spec.Template
	sel, err := labelsSelector(r.deployment.Spec.Selector.MatchLabels)
	require.NoError(t, err)
	assert.True(t, sel.Matches(labels.Set(pod.Labels)), "the Deployment's selector matches its pods")
	assert.True(t, labels.SelectorFromSet(r.service.Spec.Selector).Matches(labels.Set(pod.Labels)), "the Service selects the pods")
	if r.pdb != nil {
		s, err := labelsSelector(r.pdb.Spec.Selector.MatchLabels)
		require.NoError(t, err)
		assert.True(t, s.Matches(labels.Set(pod.Labels)), "the budget covers the pods")
	}
	if r.monitor != nil {
		assert.True(t, labels.SelectorFromSet(r.monitor.Spec.Selector.MatchLabels).Matches(labels.Set(r.service.Labels)), "the ServiceMonitor selects the Service")
		require.Len(t, r.monitor.Spec.Endpoints, 1)
		assert.Equal(t, "/metrics", r.monitor.Spec.Endpoints[0].Path)
		assert.Contains(t, servicePortNames(r.service), r.monitor.Spec.Endpoints[0].Port)
	}
}

// checkSecurityContext: non-root, read-only root, every capability
// dropped, no escalation, the runtime's seccomp profile, no API token.
func checkSecurityContext(t *testing.T, r rendered) {
	pod := r.deployment.Spec.Template
	c := container(t, r)
	psc := pod.Spec.SecurityContext
	require.NotNil(t, psc)
	assert.True(t, *psc.RunAsNonRoot)
	assert.NotZero(t, *psc.RunAsUser, "not root")
	require.NotNil(t, psc.SeccompProfile)
	assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, psc.SeccompProfile.Type)
	sc := c.SecurityContext
	require.NotNil(t, sc)
	assert.True(t, *sc.ReadOnlyRootFilesystem)
	assert.False(t, *sc.AllowPrivilegeEscalation)
	assert.False(t, sc.Privileged != nil && *sc.Privileged)
	require.NotNil(t, sc.Capabilities)
	assert.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop)
	assert.Empty(t, sc.Capabilities.Add)
	assert.False(t, *pod.Spec.AutomountServiceAccountToken, "the bridge calls no Kubernetes API")
}

// checkProbes: the probes ask the bridge's own routes on server.addr's
// port, with time enough for /readyz and for a migration at start.
func checkProbes(t *testing.T, r rendered) {
	c := container(t, r)
	cfg := bridgeConfig(t, r)
	_, port, err := net.SplitHostPort(cfg.Server.Addr)
	require.NoError(t, err)
	for probe, want := range map[*corev1.Probe]string{c.StartupProbe: "/healthz", c.LivenessProbe: "/healthz", c.ReadinessProbe: "/readyz"} {
		require.NotNil(t, probe)
		require.NotNil(t, probe.HTTPGet)
		assert.Equal(t, want, probe.HTTPGet.Path)
		assert.Equal(t, port, strconv.Itoa(int(containerPort(t, c, probe.HTTPGet.Port.String()))), "the probe's port is server.addr's")
	}
	// /readyz answers within 5 s (the store within store.timeout,
	// the platform's check bounded too): a shorter timeout would
	// take a slow but ready instance out.
	assert.GreaterOrEqual(t, c.ReadinessProbe.TimeoutSeconds, int32(6))
	// Liveness only after the start (migrations run under a lock).
	assert.GreaterOrEqual(t, c.StartupProbe.PeriodSeconds*c.StartupProbe.FailureThreshold, int32(120))
}

// checkGrace: the termination grace is above the preStop sleep and the
// bridge's drain.
func checkGrace(t *testing.T, r rendered) {
	pod := r.deployment.Spec.Template
	c := container(t, r)
	preStop := int64(0)
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
		preStop = c.Lifecycle.PreStop.Sleep.Seconds
	}
	assert.Greater(t, *pod.Spec.TerminationGracePeriodSeconds, preStop+drain)
}

// checkMemoryLimit: a memory limit the bridge can follow.
func checkMemoryLimit(t *testing.T, r rendered) {
	c := container(t, r)
	mem, ok := c.Resources.Limits[corev1.ResourceMemory]
	require.True(t, ok, "a memory limit, which the bridge follows (90%)")
	assert.GreaterOrEqual(t, mem.Value(), int64(256<<20))
}

// checkSecrets: every secret the configuration needs is there, none in
// the ConfigMap; SQLite has one replica, replaced not rolled.
func checkSecrets(t *testing.T, r rendered) {
	checkSecretRefs(t, r)
	cfg := bridgeConfig(t, r) // fails with the key when one is missing
	if cfg.Store.Driver == "sqlite" {
		assert.Equal(t, int32(1), *r.deployment.Spec.Replicas)
		assert.Equal(t, appsv1.RecreateDeploymentStrategyType, r.deployment.Spec.Strategy.Type, "one SQLite writer at a time")
	}
	assert.NotContains(t, r.configMap.Data["config.yaml"], "hash_key", "no secret in the ConfigMap")
}

// checkWritablePaths: /data and /tmp are writable volumes (the root
// filesystem is read-only).
func checkWritablePaths(t *testing.T, r rendered) {
	pod := r.deployment.Spec.Template
	c := container(t, r)
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m
		assert.Contains(t, volumeNames(pod.Spec), m.Name)
	}
	for _, p := range []string{"/data", "/tmp"} {
		assert.Contains(t, mounts, p, "the root filesystem is read-only: %s needs a volume", p)
		assert.False(t, mounts[p].ReadOnly)
	}
}

// checkBudget: a disruption budget with several replicas, none with one.
func checkBudget(t *testing.T, r rendered) {
	if *r.deployment.Spec.Replicas > 1 {
		require.NotNil(t, r.pdb, "several replicas: a disruption budget")
		assert.Equal(t, 1, r.pdb.Spec.MaxUnavailable.IntValue())
	} else {
		assert.Nil(t, r.pdb, "one replica: a budget would block every node drain")
	}
}

// checkIngress: the ingress, when there is one, routes to the Service's ports.
func checkIngress(t *testing.T, r rendered) {
	if r.ingress == nil {
		return
	}
	for _, rule := range r.ingress.Spec.Rules {
		for _, p := range rule.HTTP.Paths {
			assert.Equal(t, r.service.Name, p.Backend.Service.Name)
			assert.Contains(t, servicePortNames(r.service), p.Backend.Service.Port.Name)
		}
	}
}

// TestLint: `helm lint --strict` for every scenario (Chart.yaml, the
// templates, the schema): a warning fails as an error does.
func TestLint(t *testing.T) {
	kv, err := chartutil.ParseKubeVersion(KubeVersion)
	require.NoError(t, err)
	for name, values := range scenarios(t) {
		t.Run(name, func(t *testing.T) {
			linter := lint.AllWithKubeVersion(chartDir, values, "schools", kv)
			for _, m := range linter.Messages {
				if m.Severity > support.InfoSev {
					t.Error(m.Error())
				}
			}
		})
	}
}

// TestScenariosCoverTheDeployments: the ci/ files are the trial, production
// on PostgreSQL, and every way in; a renamed or lost one fails here.
func TestScenariosCoverTheDeployments(t *testing.T) {
	ways := map[string]bool{}
	drivers := map[string]bool{}
	for _, values := range scenarios(t) {
		r := render(t, values)
		cfg := bridgeConfig(t, r)
		drivers[cfg.Store.Driver] = true
		ways["oidc"] = ways["oidc"] || config.Settings(cfg, oidc.Section()).Issuer != ""
		ways["saml"] = ways["saml"] || config.Settings(cfg, samlsso.Section()).Enabled()
		ways["lti"] = ways["lti"] || len(config.Settings(cfg, lti.Section()).Platforms) > 0
		ways["scim"] = ways["scim"] || config.Settings(cfg, scim.Section()).Enabled
		ways["portal"] = ways["portal"] || config.Settings(cfg, portal.Section()).Enabled()
	}
	assert.Equal(t, map[string]bool{"sqlite": true, "postgres": true}, drivers)
	assert.Equal(t, map[string]bool{"oidc": true, "saml": true, "lti": true, "scim": true, "portal": true}, ways)
}

// TestWrongValuesFailAtInstall: what values.schema.json and the chart's
// checks refuse, each with words that name the value.
func TestWrongValuesFailAtInstall(t *testing.T) {
	postgresFile := filepath.Join(chartDir, "ci", "postgres-values.yaml")
	postgres, err := ValuesFile(postgresFile)
	require.NoError(t, err)
	tests := []struct {
		name   string
		change string // YAML merged over ci/postgres-values.yaml
		want   string
	}{
		{"replicas as text", `replicaCount: two`, "replicaCount"},
		{"no replica", `replicaCount: 0`, "replicaCount"},
		{"an unknown value", `replicas: 2`, "replicas"},
		{"a misspelt secret", `secrets: {sessionHashkey: {value: x}}`, "sessionHashkey"},
		{"a secret both ways", `secrets: {platformApiSecret: {value: x, existingSecret: y}}`, "platformApiSecret"},
		{"an unknown driver", `config: {store: {driver: mysql}}`, "driver"},
		{"grace under the drain", `terminationGracePeriodSeconds: 30`, "terminationGracePeriodSeconds"},
		{"readiness cut before /readyz answers", `probes: {readiness: {timeoutSeconds: 2}}`, "timeoutSeconds"},
		{"metrics on the public port", `metrics: {port: 8080}`, "port"},
		{"a bad pull policy", `image: {pullPolicy: Sometimes}`, "pullPolicy"},
		{"SQLite with two replicas", `config: {store: {driver: sqlite}}`, "SQLite holds one instance"},
		{"PostgreSQL without its URL", `secrets: {storeDsn: null}`, "secrets.storeDsn"},
		{"PostgreSQL without session keys", `secrets: {sessionBlockKey: null}`, "secrets.sessionHashKey and secrets.sessionBlockKey"},
		{"no platform secret", `secrets: {platformApiSecret: null}`, "secrets.platformApiSecret"},
		{"OIDC without its secret", `config: {oidc: {issuer: "https://idp.example.org", client_id: c}}`, "secrets.oidcClientSecret"},
		{"SCIM without a token", `config: {scim: {enabled: true}}`, "secrets.scimTokens"},
		{"the portal without its key", `config: {portal: {jwt_issuer: "https://portal.example.org"}}`, "secrets.portalJwtSecret"},
		{"a SAML key without its certificate", `secrets: {samlSpKey: {existingSecret: saml}}`, "secrets.samlSpKey and secrets.samlSpCert"},
		{"a secret in the configuration", `config: {platform: {api_secret: oops}}`, "config.platform.api_secret"},
		{"the database URL in the configuration", `config: {store: {dsn: "postgres://u:p@db/x"}}`, "config.store.dsn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// As `helm install -f ci/postgres-values.yaml -f change.yaml`:
			// the later file wins, maps merge, a null removes the value.
			base, err := ValuesFile(postgresFile)
			require.NoError(t, err)
			change, err := chartutil.ReadValues([]byte(tt.change))
			require.NoError(t, err)
			_, err = Render(chartDir, chartutil.MergeTables(change.AsMap(), base))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	// The base itself renders: each failure above is its change's.
	_, err = Render(chartDir, postgres)
	require.NoError(t, err)
}

// TestDecodeIsStrict: the checker itself fails on what a cluster refuses.
func TestDecodeIsStrict(t *testing.T) {
	const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: ssobridge}
spec:
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec:
      containers:
        - name: ssobridge
          image: ssobridge:1.0.0
          %s
`
	tests := []struct {
		name, manifest, want string
	}{
		{"valid", fmt.Sprintf(deployment, "ports: [{containerPort: 8080}]"), ""},
		{"an unknown field", fmt.Sprintf(deployment, "readOnly: true"), "unknown field"},
		{"a wrong type", fmt.Sprintf(deployment, "ports: [{containerPort: http}]"), "cannot unmarshal"},
		{"a missing required field", fmt.Sprintf(deployment, "ports: [{name: http}]"), "ports[0].containerPort"},
		{"a container without its name", strings.Replace(fmt.Sprintf(deployment, ""), "- name: ssobridge\n          image:", "- image:", 1), "containers[0].name"},
		{"a bad name", strings.Replace(fmt.Sprintf(deployment, ""), "name: ssobridge}", "name: SSO_Bridge}", 1), "metadata.name"},
		{"a bad label", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: {app: \"not a value\"}}\n", "label app"},
		{"an unknown kind", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", "kind not known"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.manifest)
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func container(t *testing.T, r rendered) corev1.Container {
	t.Helper()
	cs := r.deployment.Spec.Template.Spec.Containers
	require.Len(t, cs, 1)
	return cs[0]
}

func containerPort(t *testing.T, c corev1.Container, name string) int32 {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == name || strconv.Itoa(int(p.ContainerPort)) == name {
			return p.ContainerPort
		}
	}
	t.Fatalf("no container port %q", name)
	return 0
}

func servicePortNames(s *corev1.Service) []string {
	var names []string
	for _, p := range s.Spec.Ports {
		names = append(names, p.Name)
	}
	return names
}

func volumeNames(spec corev1.PodSpec) []string {
	var names []string
	for _, v := range spec.Volumes {
		names = append(names, v.Name)
	}
	return names
}

func labelsSelector(m map[string]string) (labels.Selector, error) {
	if len(m) == 0 {
		return nil, fmt.Errorf("an empty selector selects everything")
	}
	return labels.SelectorFromSet(m), nil
}

// checkSecretRefs: every Secret the pod reads is the chart's (holding the
// key read) or one the values name as existing (the district's own).
func checkSecretRefs(t *testing.T, r rendered) {
	t.Helper()
	existing := map[string]bool{}
	if secrets, ok := r.values["secrets"].(map[string]any); ok {
		for _, s := range secrets {
			if m, ok := s.(map[string]any); ok && m["existingSecret"] != nil {
				existing[m["existingSecret"].(string)] = true
			}
		}
	}
	check := func(name, key string) {
		if existing[name] {
			return
		}
		require.NotNil(t, r.secret, "the pod reads Secret %q, which the chart does not make", name)
		assert.Equal(t, r.secret.Name, name)
		assert.Contains(t, r.secret.Data, key)
	}
	c := container(t, r)
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			require.NotEmpty(t, e.ValueFrom.SecretKeyRef.Name, e.Name)
			check(e.ValueFrom.SecretKeyRef.Name, e.ValueFrom.SecretKeyRef.Key)
		}
	}
	for _, v := range r.deployment.Spec.Template.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.Secret != nil {
				for _, item := range src.Secret.Items {
					check(src.Secret.Name, item.Key)
				}
			}
		}
	}
}

// bridgeConfig reads the rendered config.yaml as the bridge does at start,
// with the container's environment (each secret a stand-in of the right
// form) and the mounted secret files written where the configuration looks
// for them: a configuration that needs a secret the chart did not give
// fails here with the bridge's own message.
func bridgeConfig(t *testing.T, r rendered) config.Config {
	t.Helper()
	c := container(t, r)
	dir := t.TempDir()
	text := r.configMap.Data["config.yaml"]
	for _, m := range c.VolumeMounts {
		if m.MountPath != "/etc/ssobridge/secrets" {
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "secrets"), 0o700))
		saml := samlPair(t) // the key and certificate match
		for _, v := range r.deployment.Spec.Template.Spec.Volumes {
			if v.Name != m.Name || v.Projected == nil {
				continue
			}
			for _, src := range v.Projected.Sources {
				for _, item := range src.Secret.Items {
					require.NoError(t, os.WriteFile(filepath.Join(dir, "secrets", item.Path), standInFile(t, item.Path, saml), 0o600))
				}
			}
		}
		text = strings.ReplaceAll(text, "/etc/ssobridge/secrets/", filepath.Join(dir, "secrets")+"/")
	}
	env := slices.Clone(imageEnv)
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			env = append(env, e.Name+"="+standIn(e.Name))
		default:
			env = append(env, e.Name+"="+e.Value)
		}
	}
	cfg, err := app.ParseConfig([]byte(text), env)
	require.NoError(t, err, "the bridge refuses the rendered configuration:\n%s", text)
	return cfg
}

// standIn is a value of the form the bridge checks for the variable.
func standIn(env string) string {
	switch env {
	case "SSOBRIDGE_SESSION_HASH_KEY", "SSOBRIDGE_SESSION_BLOCK_KEY":
		return strings.Repeat("ab", 32)
	case "SSOBRIDGE_STORE_DSN":
		return "postgres://ssobridge:pw@db.schools.svc:5432/ssobridge?sslmode=require"
	default:
		return strings.Repeat("s", 40)
	}
}

// standInFile is a file of the form the bridge reads at start.
func standInFile(t *testing.T, name string, saml map[string][]byte) []byte {
	t.Helper()
	switch {
	case strings.HasSuffix(name, "key.pem") && strings.HasPrefix(name, "lti"):
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		require.NoError(t, err)
		return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	case strings.HasPrefix(name, "saml-sp-"):
		return saml[name]
	default:
		return []byte(strings.Repeat("t", 40) + "\n")
	}
}

// samlPair is a matching key and certificate, by the chart's file names.
func samlPair(t *testing.T) map[string][]byte {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ssobridge"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	require.NoError(t, err)
	kb, err := x509.MarshalPKCS8PrivateKey(k)
	require.NoError(t, err)
	return map[string][]byte{
		"saml-sp-key.pem":  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}),
		"saml-sp-cert.pem": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
	}
}
