package locale

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A message's id is a constant the source writes: only a constant
// becomes an ID without a word (the compiler refuses a string variable),
// so what is left to check is the word. Outside this package no code
// converts a value to an ID, and no template passes anything but a quoted
// text to t, tn or tm: an address, a name or a title that came from
// outside could otherwise be run as a message's template.
func TestMessageIDsAreConstants(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	templCall := regexp.MustCompile(`\b(t|tm|tn)\(ctx,\s*([^)]*)`)
	var checked int
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		switch {
		case strings.HasSuffix(path, ".templ"):
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range templCall.FindAllStringSubmatch(string(src), -1) {
				checked++
				assert.True(t, strings.HasPrefix(strings.TrimSpace(m[2]), `"`), "%s: %s(ctx, %s…): a message id is a quoted text", rel, m[1], m[2])
			}
		case strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_templ.go"):
			if filepath.Dir(rel) == "locale" {
				return nil // Name and Date convert on purpose, and never run what they convert
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "ID" {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "locale" {
						checked++
						_, lit := call.Args[0].(*ast.BasicLit)
						assert.True(t, lit, "%s: locale.ID(…) of a value that is not a quoted text", rel)
					}
				}
				return true
			})
		}
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, checked, 100, "the templates' messages were found")
}
