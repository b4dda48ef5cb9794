package config

import (
	"fmt"
	"reflect"

	"go.yaml.in/yaml/v3"
)

// SectionList is a setting that is a list of sections (lti.platforms: one
// section of keys per LMS), written in the file as a YAML list and in its
// SSOBRIDGE_* variable as the same list in YAML's or JSON's flow form.
// The slice type declares it; each item's keys are read by the rules of
// every section.
type SectionList interface {
	// ListItem is an item holding its defaults (a pointer to the slice's
	// element type), the item's noun for messages ("platform") and an
	// example of the list in flow form, for a variable that is no list.
	ListItem() (item any, noun, example string)
}

var sectionListType = reflect.TypeFor[SectionList]()

// isSectionList reports whether a field's type is a SectionList.
func isSectionList(t reflect.Type) bool { return t.Implements(sectionListType) }

// listItem is a new item of the list field f: a SectionList's, with its
// defaults and noun, or else an element of zero values, an "item".
func listItem(f reflect.Value) (item reflect.Value, noun, example string) {
	if l, ok := f.Interface().(SectionList); ok {
		p, noun, example := l.ListItem()
		return reflect.ValueOf(p).Elem(), noun, example
	}
	return reflect.New(f.Type().Elem()).Elem(), "item", ""
}

// decodeSectionList reads the list field f (a SectionList, or a slice of
// structs) from a sequence node, each item a section of its element's
// keys.
func decodeSectionList(n *yaml.Node, key string, f reflect.Value, errs *Errors) {
	proto, noun, _ := listItem(f)
	first := proto.Type().Field(0).Tag.Get("yaml")
	if n.Kind != yaml.SequenceNode {
		*errs = append(*errs, &Error{Key: key, Problem: fmt.Sprintf("line %d: expected a list of %ss (- %s: ...), found %s", n.Line, noun, first, describe(n))})
		return
	}
	list := reflect.MakeSlice(f.Type(), 0, len(n.Content))
	for i, item := range n.Content {
		if item.Kind == yaml.AliasNode {
			item = item.Alias
		}
		ik := fmt.Sprintf("%s[%d]", key, i)
		if item.Kind != yaml.MappingNode {
			*errs = append(*errs, &Error{Key: ik, Problem: fmt.Sprintf("line %d: expected the keys of a %s (%s, ...), found %s", item.Line, noun, first, describe(item))})
			continue
		}
		elem, _, _ := listItem(f)
		walkSection(item, ik, elem, errs, nil)
		list = reflect.Append(list, elem)
	}
	f.Set(list)
}

// sectionListFromEnv reads a SectionList's variable into f.
func sectionListFromEnv(name, value string, f reflect.Value) Errors {
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(value), &root); err != nil || len(root.Content) == 0 {
		_, noun, example := listItem(f)
		return Errors{{Key: name, Problem: fmt.Sprintf("not a list of %ss; e.g. %s", noun, example)}}
	}
	var errs Errors
	decodeSectionList(root.Content[0], name, f, &errs)
	return errs
}
