// Package helmcheck validates the bridge's Helm chart offline: it renders
// the chart as `helm install` would (values.schema.json and the chart's own
// checks included) and decodes every manifest strictly against the
// Kubernetes API types, so an unknown field, a wrong type or a missing
// required field fails without a cluster. It is a module of its own so that
// Helm and the Kubernetes types stay out of the bridge's go.mod.
package helmcheck

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
)

// KubeVersion is the cluster the chart is rendered for: the oldest the
// chart supports (Chart.yaml's kubeVersion), so that no field newer than
// it slips in unnoticed.
const KubeVersion = "v1.30.0"

// Manifest is one rendered object: the template it came from and its YAML.
type Manifest struct {
	Template string
	YAML     string
}

// Render renders the chart at dir with the values (as from a values file,
// merged over the chart's own) for a first install of release "ssobridge"
// in namespace "schools", in the chart's template order. Values that
// values.schema.json refuses, a kubeVersion the chart refuses and the
// chart's own `fail`s are errors, as at `helm install`.
func Render(dir string, values map[string]any) ([]Manifest, error) {
	ch, err := loader.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("load chart: %w", err)
	}
	caps := chartutil.DefaultCapabilities.Copy()
	kv, err := chartutil.ParseKubeVersion(KubeVersion)
	if err != nil {
		return nil, err
	}
	caps.KubeVersion = *kv
	if c := ch.Metadata.KubeVersion; c != "" && !chartutil.IsCompatibleRange(c, KubeVersion) {
		return nil, fmt.Errorf("chart requires kubeVersion %s, rendered for %s", c, KubeVersion)
	}
	opts := chartutil.ReleaseOptions{Name: "ssobridge", Namespace: "schools", Revision: 1, IsInstall: true}
	rv, err := chartutil.ToRenderValues(ch, values, opts, caps)
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	out, err := engine.Render(ch, rv)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	var ms []Manifest
	for _, name := range slices.Sorted(maps.Keys(out)) {
		if path.Ext(name) != ".yaml" {
			continue // NOTES.txt, _helpers.tpl
		}
		docs := releaseutil.SplitManifests(out[name])
		keys := slices.Collect(maps.Keys(docs))
		sort.Sort(releaseutil.BySplitManifestsOrder(keys))
		for _, k := range keys {
			if doc := strings.TrimSpace(docs[k]); doc != "" {
				ms = append(ms, Manifest{Template: name, YAML: doc})
			}
		}
	}
	return ms, nil
}

// ValuesFile reads a values file as `helm install -f` does.
func ValuesFile(file string) (map[string]any, error) {
	v, err := chartutil.ReadValuesFile(file)
	if err != nil {
		return nil, err
	}
	return v.AsMap(), nil
}
