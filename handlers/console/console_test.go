package console

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
)

// The console's lists: ?page= read safely, the neighbours linked with the
// other query values kept.
func TestPageParamAndPager(t *testing.T) {
	e := echo.New()
	ctx := func(target string) echo.Context {
		return e.NewContext(httptest.NewRequest("GET", target, nil), httptest.NewRecorder())
	}
	for q, want := range map[string]int{"": 1, "?page=3": 3, "?page=0": 1, "?page=-2": 1, "?page=x": 1, "?page=1000001": 1} {
		assert.Equal(t, want, pageParam(ctx("/admin/audit"+q)), q)
	}
	pg := makePager(ctx("/admin/audit?kind=login&page=2"), 2, 120, 50)
	assert.Equal(t, 3, pg.Pages)
	assert.Equal(t, "/admin/audit?kind=login&page=1", pg.PrevURL)
	assert.Equal(t, "/admin/audit?kind=login&page=3", pg.NextURL)
	pg = makePager(ctx("/admin/audit?page=9"), 9, 120, 50)
	assert.Equal(t, "/admin/audit?page=3", pg.PrevURL, "past the end: back to the last page")
	assert.Empty(t, pg.NextURL)
	assert.Equal(t, 1, makePager(ctx("/x"), 1, 0, 50).Pages, "an empty list is one page")
}

// A console search is trimmed and bounded, cut at a character's start.
func TestConsoleQuery(t *testing.T) {
	e := echo.New()
	long := "é" + strings.Repeat("a", 300)
	c := e.NewContext(httptest.NewRequest("GET", "/admin/accounts?q="+url.QueryEscape("  ada@example.com "), nil), httptest.NewRecorder())
	assert.Equal(t, "ada@example.com", consoleQuery(c, "q"))
	c = e.NewContext(httptest.NewRequest("GET", "/admin/accounts?q="+url.QueryEscape(strings.Repeat("a", 253)+"é"), nil), httptest.NewRecorder())
	assert.Equal(t, strings.Repeat("a", 253), consoleQuery(c, "q"), "never half a character")
	c = e.NewContext(httptest.NewRequest("GET", "/admin/accounts?q="+url.QueryEscape(long), nil), httptest.NewRecorder())
	assert.Len(t, consoleQuery(c, "q"), maxConsoleQuery)
	assert.Equal(t, "abcdefghijkl", shortID("abcdefghijklmnop"))
	assert.Equal(t, "abc", shortID("abc"))
}
