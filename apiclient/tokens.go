package apiclient

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// LoginToken is a one-time token that logs the user in through the browser.
type LoginToken struct {
	Token     string
	ExpiresIn time.Duration
}

// String hides the token from logs.
func (t LoginToken) String() string { return "LoginToken{redacted}" }

// TokenProperties travel with a login token to the exchange.
type TokenProperties struct {
	// RedirectTo is the relative platform path the browser lands on after
	// the exchange; empty: the platform's landing page.
	RedirectTo string
}

// IssueLoginToken asks the platform for a one-time login token for userID.
// Issuance is safe to retry (unused tokens expire on their own). A 404
// means the user no longer exists.
func (c *Client) IssueLoginToken(ctx context.Context, userID UserID, props TokenProperties) (LoginToken, error) {
	if userID == "" {
		return LoginToken{}, fmt.Errorf("%w: empty userId", ErrInvalidInput)
	}
	path := strings.ReplaceAll(c.opts.Shapes.TokenPath, "{userId}", url.PathEscape(string(userID)))
	var body any
	if props.RedirectTo != "" {
		body = map[string]map[string]string{"properties": {c.opts.Shapes.RedirectField: props.RedirectTo}}
	}
	var out struct {
		LoginToken string `json:"loginToken"`
		ExpiresIn  int64  `json:"expiresIn"`
	}
	if _, err := c.do(ctx, call{endpoint: EndpointIssueToken, method: http.MethodPost, path: path, body: body, rule: retrySafe}, &out); err != nil {
		return LoginToken{}, err
	}
	if out.LoginToken == "" {
		return LoginToken{}, fmt.Errorf("%w: no loginToken in the answer", ErrBadResponse)
	}
	return LoginToken{Token: out.LoginToken, ExpiresIn: time.Duration(out.ExpiresIn) * time.Second}, nil
}

// ExchangeURL is where the browser takes the token to get the platform's
// session cookie. It is the only URL a login token may appear in.
func (c *Client) ExchangeURL(t LoginToken) string {
	return c.base.String() + APIPrefix + strings.ReplaceAll(c.opts.Shapes.ExchangePath, "{token}", url.PathEscape(t.Token))
}
