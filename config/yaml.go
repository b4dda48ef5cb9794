package config

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// decodeYAML sets cfg's keys from a YAML document. It walks the document
// itself rather than letting the YAML decoder fill the struct, so every
// problem names its key (server.addr), its line and the fix, and values
// are read by the same rules as SSOBRIDGE_* variables (setFromString).
// fileKey names the whole file in an error about it (Load puts its path
// in its place).
const fileKey = "(file)"

func decodeYAML(cfg *Config, data []byte) Errors {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return Errors{{Key: fileKey, Problem: yamlSyntaxProblem(err)}}
	}
	if len(root.Content) == 0 {
		return nil // empty or only comments
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode {
		if doc.Kind == yaml.ScalarNode && doc.Tag == "!!null" {
			return nil
		}
		return Errors{{Key: fileKey, Problem: fmt.Sprintf("line %d: expected sections such as server: and platform:, found %s", doc.Line, describe(doc))}}
	}
	var errs Errors
	modules := map[string]reflect.Value{}
	for k, m := range cfg.modules {
		modules[k] = m.v
	}
	walkSection(doc, "", reflect.ValueOf(cfg).Elem(), &errs, modules)
	return errs
}

// walkSection sets the keys of one mapping node on the struct v; more
// are sections besides v's fields (the modules', at the top).
func walkSection(n *yaml.Node, prefix string, v reflect.Value, errs *Errors, more map[string]reflect.Value) {
	bad := func(key string, line int, format string, args ...any) {
		*errs = append(*errs, &Error{Key: key, Problem: fmt.Sprintf("line %d: ", line) + fmt.Sprintf(format, args...)})
	}
	fields := map[string]reflect.Value{}
	var names []string
	for i := range v.NumField() {
		if name := v.Type().Field(i).Tag.Get("yaml"); name != "" && name != "-" {
			fields[name] = v.Field(i)
			names = append(names, name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(more)) {
		fields[name] = more[name]
		names = append(names, name)
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key := join(prefix, k.Value)
		if first, dup := seen[k.Value]; dup {
			bad(key, k.Line, "set twice (first on line %d); keep one", first)
			continue
		}
		seen[k.Value] = k.Line
		f, ok := fields[k.Value]
		if !ok {
			hint := "the keys are listed in docs/configuration.md"
			if near := Nearest(k.Value, names); near != "" {
				hint = "did you mean " + join(prefix, near) + "?"
			}
			bad(key, k.Line, "no such setting; %s", hint)
			continue
		}
		if val.Kind == yaml.AliasNode {
			val = val.Alias
		}
		if f.Kind() == reflect.Struct {
			if val.Kind != yaml.MappingNode {
				bad(key, val.Line, "expected the keys of this section (%s.%s, ...), found %s", key, f.Type().Field(0).Tag.Get("yaml"), describe(val))
				continue
			}
			walkSection(val, key, f, errs, nil)
			continue
		}
		if isSectionList(f.Type()) || f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Struct {
			decodeSectionList(val, key, f, errs) // lti.platforms, deep_link_items
			continue
		}
		if val.Kind == yaml.SequenceNode && f.Type() == reflect.TypeOf(Words("")) {
			var words []string
			for _, item := range val.Content {
				if item.Kind != yaml.ScalarNode || strings.ContainsAny(item.Value, " \t") {
					bad(key, item.Line, "expected single words in the list, found %s", describe(item))
					words = nil
					break
				}
				words = append(words, item.Value)
			}
			f.SetString(strings.Join(words, " "))
			continue
		}
		if val.Kind != yaml.ScalarNode {
			bad(key, val.Line, "expected a single value, found %s", describe(val))
			continue
		}
		if err := setFromString(f, val.Value); err != nil {
			bad(key, val.Line, "%v", err)
		}
	}
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// describe names a node for a message, without YAML's tags.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a section of keys"
	}
	return fmt.Sprintf("%q", n.Value)
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// yamlSyntaxProblem turns the parser's error into a line and a hint.
func yamlSyntaxProblem(err error) string {
	msg := err.Error()
	line := "1"
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, msg = m[1], msg[len(m[0]):]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	return "line " + line + ": the file is not valid YAML (" + msg + "); keys are written as section:, then indented key: value lines, as in the shipped config.yaml"
}

// longForms are the words some keys shorten: a typo of the long form
// ("adress" for address) is near the key too.
var longForms = map[string]string{"addr": "address", "dsn": "datasource", "ttl": "timetolive"}

// Nearest is the name closest to s, or "": within two edits of the name
// (or of the word it shortens), or, for names of "_"-separated words,
// the one name whose words hold all of s's words in order
// (PLATFORM_SECRET for PLATFORM_API_SECRET). The command line uses it for
// its commands too.
func Nearest(s string, names []string) string {
	s = strings.ToLower(s)
	best, bestD := "", 3
	for _, n := range names {
		d := editDistance(s, strings.ToLower(n))
		if long, ok := longForms[n]; ok {
			d = min(d, editDistance(s, long))
		}
		if d < bestD {
			best, bestD = n, d
		}
	}
	if best != "" || !strings.Contains(s, "_") {
		return best
	}
	// The name with the fewest words besides s's, if only one has that few.
	best, fewest, ties := "", 0, 0
	want := strings.Split(s, "_")
	for _, n := range names {
		have := strings.Split(strings.ToLower(n), "_")
		if !wordsIn(want, have) {
			continue
		}
		switch extra := len(have) - len(want); {
		case best == "" || extra < fewest:
			best, fewest, ties = n, extra, 0
		case extra == fewest:
			ties++
		}
	}
	if ties > 0 {
		return ""
	}
	return best
}

// wordsIn reports whether every word of want appears in have, in order.
func wordsIn(want, have []string) bool {
	i := 0
	for _, w := range have {
		if i < len(want) && w == want[i] {
			i++
		}
	}
	return i == len(want)
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
