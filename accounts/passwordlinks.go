package accounts

import (
	"context"
	"fmt"
	"time"
)

// PasswordLinkTTL is how long a set-password link is valid.
const PasswordLinkTTL = 72 * time.Hour

// IssuePasswordLink makes a set-password link for the account, valid for
// PasswordLinkTTL from now and replacing any earlier one: it returns the
// token for the link; the store keeps only its SHA-256.
func IssuePasswordLink(ctx context.Context, s interface {
	CreatePasswordLink(ctx context.Context, accountID int64, id string, expires time.Time) error
}, accountID int64, now time.Time) (string, error) {
	token, id := NewSessionToken()
	if err := s.CreatePasswordLink(ctx, accountID, id, now.Add(PasswordLinkTTL)); err != nil {
		return "", fmt.Errorf("accounts: password link: %w", err)
	}
	return token, nil
}

// SetPasswordPath is the bridge's path of a set-password link's token.
func SetPasswordPath(token string) string { return "/set-password?token=" + token }
