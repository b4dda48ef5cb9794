package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// FuzzFormDecoding posts arbitrary form bodies to the sign-in and launch
// forms: the answer is always a clear 4xx page (or a launch for a valid
// return_to), never a 5xx, never a sign-in without the password.
func FuzzFormDecoding(f *testing.F) {
	for _, s := range []string{"email=ada%40example.com&password=x", "email=%zz&password=%", "return_to=%2F%2Fevil", "a=1&a=2&email=&password=",
		"email=" + strings.Repeat("a", 300), "password=%00%ff&email=ada@example.com", "return_to=/editor?x=1"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	ta := startTestApp(f, testOptions{yaml: "regulation:\n  max_retries: 0\n  max_retries_per_ip: 0\n"})
	ta.addAccount(f, "ada@example.com", false)
	anon := ta.browser(f)
	loginTok := anon.csrf("/login")
	user := ta.browser(f)
	if p := user.login("ada@example.com", testPassword); p.status != http.StatusSeeOther {
		f.Fatalf("sign-in failed: %d", p.status)
	}
	launchTok := user.csrf("/")

	f.Fuzz(func(t *testing.T, body string, launch bool) {
		b, path, tok := anon, "/login", loginTok
		if launch {
			b, path, tok = user, "/launch", launchTok
		}
		req, _ := http.NewRequest("POST", b.base+path, strings.NewReader("_csrf="+url.QueryEscape(tok)+"&"+body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		p := (&browser{t: t, base: b.base, c: b.c}).do(req) // t, not the F, inside the target
		assert.Less(t, p.status, 500, "no server error for %q: %s", body, p.body)
		if !launch {
			assert.NotEqual(t, http.StatusSeeOther, p.status, "no sign-in without the password: %q", body)
		}
	})
}
