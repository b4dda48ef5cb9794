package apiclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
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

// IssueLoginToken asks the platform for a one-time login token for userID
// (platform.shapes: token_method, token_path, token_redirect, token_field).
// Issuance is safe to retry (unused tokens expire on their own). A 404
// means the user no longer exists.
func (c *Client) IssueLoginToken(ctx context.Context, userID UserID, props TokenProperties) (LoginToken, error) {
	if userID == "" {
		return LoginToken{}, fmt.Errorf("%w: empty userId", ErrInvalidInput)
	}
	s := c.opts.Shapes
	path := strings.ReplaceAll(s.TokenPath, "{userId}", url.PathEscape(string(userID)))
	var body any
	if props.RedirectTo != "" && s.TokenRedirect != NoTokenBody {
		body = setAt(s.TokenRedirect, props.RedirectTo)
	}
	var raw json.RawMessage
	if _, err := c.do(ctx, call{endpoint: EndpointIssueToken, method: s.TokenMethod, path: path, body: body, rule: retrySafe}, &raw); err != nil {
		return LoginToken{}, err
	}
	v, err := decodeAny(raw)
	if err != nil {
		return LoginToken{}, fmt.Errorf("%w: issue_token: %w", ErrBadResponse, err)
	}
	token, ok := textAt(v, s.TokenField)
	if !ok || token == "" {
		return LoginToken{}, &ShapeMismatch{Key: "token_field", Problem: fmt.Sprintf("no token at `%s`; %s", s.TokenField, describeObject(v))}
	}
	t := LoginToken{Token: token}
	if n, ok := textAt(v, "expiresIn"); ok {
		if secs, err := strconv.ParseInt(n, 10, 64); err == nil && secs > 0 {
			t.ExpiresIn = time.Duration(secs) * time.Second
		}
	}
	return t, nil
}

// ExchangeURL is where the browser takes the token to get the platform's
// session cookie (platform.shapes.exchange_url). It is the only URL a
// login token may appear in.
func (c *Client) ExchangeURL(t LoginToken) string {
	return c.exchangeHead + url.PathEscape(t.Token) + c.exchangeTail
}
