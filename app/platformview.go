package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/ssobridge/ssobridge/apiclient"
	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/handlers/console"
)

// platformView adapts the Partner API client to what the admin console and
// /readyz need (console.Platform), adding the advice that names
// configuration keys: apiclient knows no configuration words.
type platformView struct {
	client   *apiclient.Client
	embedded bool
}

func (c platformView) Connection() console.Connection {
	sg := c.client.Signer()
	return console.Connection{BaseURL: c.client.BaseURL(), ExchangeURL: strings.ReplaceAll(c.client.Shapes().ExchangeURL, "{base_url}", c.client.BaseURL()), Embedded: c.embedded, Method: string(sg.Method()), Scheme: sg.Scheme(), KeyID: sg.KeyID()}
}

func (c platformView) Check(ctx context.Context) console.CheckReport {
	r := c.client.Check(ctx)
	return console.CheckReport{Verdict: string(r.Verdict), Summary: r.Summary, Advice: checkAdvice(r.Verdict, c.client.Signer()),
		URL: r.URL, Status: r.Status, Latency: r.Latency, Clock: r.DescribeClock(), Err: r.Err}
}

// ListUsers takes a 1-based page and asks for the platform's numbering.
func (c platformView) ListUsers(ctx context.Context, query string, page, size int) (console.UserPage, error) {
	p, err := c.client.ListUsers(ctx, query, c.client.Shapes().FirstPage+page-1, size)
	if err != nil {
		return console.UserPage{}, err
	}
	total := int(p.TotalElements)
	switch {
	case total >= 0:
	case p.TotalPages >= 0: // a page count but no user count: about that many
		total = p.TotalPages * size
	default: // neither: what was seen, and a page more while this one is full
		total = (page-1)*size + len(p.Content)
		if len(p.Content) == size {
			total += size
		}
	}
	out := console.UserPage{Total: total, Users: make([]console.PlatformUser, len(p.Content))}
	for i, u := range p.Content {
		out.Users[i] = console.PlatformUser{ID: string(u.UserID), FirstName: u.FirstName, LastName: u.LastName, Email: u.Email}
	}
	return out, nil
}

// checkAdvice says what to do about a verdict, in the configuration's
// words; the console and `ssobridge check` show it.
func checkAdvice(v apiclient.Verdict, sg *apiclient.Signer) []string {
	switch v {
	case apiclient.VerdictOK:
		return nil
	case apiclient.VerdictClockSkew:
		return []string{"Synchronise this server's clock (enable NTP, e.g. `timedatectl set-ntp true`).",
			"Signed requests carry a Date header that must be within a few minutes of the platform's clock."}
	case apiclient.VerdictCredentials:
		return []string{
			"Use the API secret, not the API key, as platform.api_secret (" + config.EnvName("platform.api_secret") + "); no quotes, no spaces.",
			fmt.Sprintf("Check the scheme spelling: the bridge sends %q with method %q; set platform.scheme_hmac / platform.scheme_simple to the platform's spelling.", sg.Scheme(), sg.Method()),
			"The Authorization header has exactly one space after the scheme, and no \"Bearer\".",
			"For HMAC, platform.base_url must be the URL the platform sees: the full URL (scheme, host, port, path and query) is signed.",
			"For HMAC, the API key (platform.api_key) must belong to the same credential as the secret.",
		}
	case apiclient.VerdictForbidden:
		return []string{"On the platform, make the user that owns this API key an admin of the Instance (admin rights are per Instance).",
			"Or use an API key issued to a user who already is an Instance admin."}
	case apiclient.VerdictNotFound:
		return []string{"Set platform.base_url to the platform's address without /api/5 (the bridge adds the version prefix).",
			"Check the host name and any path prefix the platform is served under.",
			"If the address is right, the platform lists its users elsewhere: set platform.shapes.users_path (docs/platform-shapes.md)."}
	case apiclient.VerdictRateLimited:
		return []string{"Wait and check again; launches back off and retry on their own.",
			"If it persists, ask the platform to raise the credential's rate limit."}
	case apiclient.VerdictServerError:
		return []string{"This is usually transient: check again in a minute.", "If it persists, contact the platform's support with the time of the check."}
	case apiclient.VerdictTimeout:
		return []string{"Check that this server can reach the platform (firewall, proxy, routing).", "Raise platform.timeout only if the platform is known to be slow."}
	case apiclient.VerdictDNS:
		return []string{"Check the host in platform.base_url and this server's DNS settings."}
	case apiclient.VerdictTLS:
		return []string{"Check that platform.base_url uses the right scheme (https) and host name, and that the platform's certificate is trusted here."}
	case apiclient.VerdictUnreachable:
		return []string{"Check platform.base_url (host and port) and that the platform is up and reachable from this server."}
	case apiclient.VerdictShape:
		return []string{"The platform answers in a shape other than the configured one: set the platform.shapes key named above (or its SSOBRIDGE_PLATFORM_SHAPES_* variable) to where the platform puts it.",
			"docs/platform-shapes.md shows the keys, two complete examples, and how to read them off the platform's answer."}
	}
	return []string{"Check platform.base_url and the API shapes the platform serves."}
}
