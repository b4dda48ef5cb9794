package helmcheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// ErrUnknownKind is a manifest of a kind the chart is not expected to make.
var ErrUnknownKind = errors.New("kind not known to the checker")

// kinds are the objects the chart may render, by apiVersion and kind.
var kinds = map[string]func() Object{
	"apps/v1 Deployment":                      func() Object { return &appsv1.Deployment{} },
	"v1 Service":                              func() Object { return &corev1.Service{} },
	"v1 ConfigMap":                            func() Object { return &corev1.ConfigMap{} },
	"v1 Secret":                               func() Object { return &corev1.Secret{} },
	"v1 ServiceAccount":                       func() Object { return &corev1.ServiceAccount{} },
	"v1 PersistentVolumeClaim":                func() Object { return &corev1.PersistentVolumeClaim{} },
	"networking.k8s.io/v1 Ingress":            func() Object { return &networkingv1.Ingress{} },
	"policy/v1 PodDisruptionBudget":           func() Object { return &policyv1.PodDisruptionBudget{} },
	"monitoring.coreos.com/v1 ServiceMonitor": func() Object { return &monitoringv1.ServiceMonitor{} },
}

// Object is a decoded manifest.
type Object interface {
	GetName() string
	GetLabels() map[string]string
}

// Decode decodes one manifest into its Kubernetes API type, strictly: an
// unknown or repeated field, a value of the wrong type, a field the type
// requires left out, or a name or label the API server would refuse is an
// error.
func Decode(manifest string) (Object, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal([]byte(manifest), &tm); err != nil {
		return nil, fmt.Errorf("not a manifest: %w", err)
	}
	newObj, ok := kinds[tm.APIVersion+" "+tm.Kind]
	if !ok {
		return nil, fmt.Errorf("%s %s: %w", tm.APIVersion, tm.Kind, ErrUnknownKind)
	}
	obj := newObj()
	if err := yaml.UnmarshalStrict([]byte(manifest), obj); err != nil {
		return nil, fmt.Errorf("%s: %w", tm.Kind, err)
	}
	var problems []string
	if missing := missingRequired(reflect.ValueOf(obj), ""); len(missing) > 0 {
		problems = append(problems, "required field(s) missing: "+strings.Join(missing, ", "))
	}
	for _, msg := range validation.IsDNS1123Subdomain(obj.GetName()) {
		problems = append(problems, "metadata.name: "+msg)
	}
	for k, v := range obj.GetLabels() {
		for _, msg := range validation.IsQualifiedName(k) {
			problems = append(problems, "label "+k+": "+msg)
		}
		for _, msg := range validation.IsValidLabelValue(v) {
			problems = append(problems, "label "+k+"="+v+": "+msg)
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s %q: %s", tm.Kind, obj.GetName(), strings.Join(problems, "; "))
	}
	return obj, nil
}

// missingRequired lists the fields under v that the API types mark as
// required (a JSON name without omitempty) and that hold their zero value.
// An object's status is left out. Types with a JSON form of their own (quantities, int-or-strings, times)
// are values, not structs to walk.
func missingRequired(v reflect.Value, at string) []string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return missingRequired(v.Elem(), at)
	case reflect.Slice, reflect.Array:
		var out []string
		for i := range v.Len() {
			out = append(out, missingRequired(v.Index(i), fmt.Sprintf("%s[%d]", at, i))...)
		}
		return out
	case reflect.Map:
		var out []string
		iter := v.MapRange()
		for iter.Next() {
			out = append(out, missingRequired(iter.Value(), fmt.Sprintf("%s[%v]", at, iter.Key()))...)
		}
		return out
	case reflect.Struct:
	default:
		return nil
	}
	if v.CanAddr() && v.Addr().Type().Implements(jsonUnmarshaler) {
		return nil
	}
	var out []string
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || at == "" && name == "status" {
			continue // status is the cluster's to write, never in a manifest
		}
		inline := f.Anonymous && name == "" || strings.Contains(opts, "inline")
		where := at
		if !inline {
			where = strings.TrimPrefix(at+"."+name, ".")
		}
		fv := v.Field(i)
		if !inline && !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") && fv.IsZero() {
			out = append(out, where)
			continue
		}
		out = append(out, missingRequired(fv, where)...)
	}
	return out
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
