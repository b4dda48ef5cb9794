package accounts

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/internal/randid"
	"github.com/ssobridge/ssobridge/store"
)

// DemoEmail is the embedded demo's admin account.
const DemoEmail = "demo@example.com"

// EnsureDemoAccount creates an admin account DemoEmail with a generated
// password when the store is empty, saving its login line at path, and
// returns the line to print: the demo login while it is true (the saved
// line, on later starts), else why none is printed.
func EnsureDemoAccount(ctx context.Context, s store.Accounts, h *passhash.Hasher, path string) (string, error) {
	n, err := s.CountAccounts(ctx)
	if err != nil {
		return "", err
	}
	if n > 0 {
		return savedDemoLogin(ctx, s, h, path, n)
	}
	password := randid.Token(12)
	hash, err := h.Hash(ctx, password)
	if err != nil {
		return "", err
	}
	if _, err := s.CreateAccount(ctx, store.NewAccount{Email: DemoEmail, FirstName: "Demo", LastName: "User", PasswordHash: hash, Admin: true}); err != nil {
		return "", err
	}
	line := "demo login: " + DemoEmail + " " + password
	if err := os.WriteFile(path, []byte(line+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("save demo login: %w", err)
	}
	return line, nil
}

// savedDemoLogin is the line for a store that holds accounts: the saved
// demo login if it still signs in, else why none is printed.
func savedDemoLogin(ctx context.Context, s store.Accounts, h *passhash.Hasher, path string, accountsInStore int) (string, error) {
	const none = "no demo login printed: "
	acct, err := s.AccountByEmail(ctx, DemoEmail)
	if errors.Is(err, store.ErrNotFound) {
		noun := "accounts"
		if accountsInStore == 1 {
			noun = "account"
		}
		return fmt.Sprintf("%sthe store holds %d %s and none is %s; sign in with one of them, or start with an empty data folder",
			none, accountsInStore, noun, DemoEmail), nil
	}
	if err != nil {
		return "", err
	}
	if acct.Disabled {
		return none + DemoEmail + " is disabled", nil
	}
	data, err := os.ReadFile(path)
	fields := strings.Fields(string(data)) // "demo login: EMAIL PASSWORD"
	if err != nil || len(fields) != 4 {
		return none + DemoEmail + " exists, but its generated password is no longer known (" + path + " is missing)", nil
	}
	switch err := h.Verify(ctx, fields[3], acct.PasswordHash); {
	case err == nil:
		return strings.TrimSpace(string(data)), nil
	case errors.Is(err, passhash.ErrPasswordMismatch):
		// The file lies now: drop it, so no later start reads it again.
		if rerr := os.Remove(path); rerr != nil {
			return "", fmt.Errorf("remove stale demo login: %w", rerr)
		}
		return none + "the password of " + DemoEmail + " was changed after it was generated", nil
	default:
		return "", err
	}
}
