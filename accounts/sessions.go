package accounts

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// What both backends share about sessions and rows.

// scanner is a row of database/sql or pgx.
type scanner interface{ Scan(dest ...any) error }

const sessionCols = "id, account_id, created_at, last_seen_at, user_agent"

func scanSession(row scanner) (Session, error) {
	var s Session
	var created, seen int64
	if err := row.Scan(&s.ID, &s.AccountID, &created, &seen, &s.UserAgent); err != nil {
		return Session{}, err
	}
	s.CreatedAt, s.LastSeenAt = time.UnixMilli(created).UTC(), time.UnixMilli(seen).UTC()
	return s, nil
}

// checkSession refuses a session record that could not have come from
// NewSessionToken, and bounds the user agent.
func checkSession(s *Session) error {
	if len(s.ID) != 64 || strings.Trim(s.ID, "0123456789abcdef") != "" || s.AccountID == 0 {
		return fmt.Errorf("%w: a session needs an account and the SessionID of a token", ErrInvalid)
	}
	s.UserAgent = strings.ToValidUTF8(truncateUTF8(s.UserAgent, MaxUserAgent), "")
	return nil
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:n]
}

// randomHolder names this store in provisioning leases.
func randomHolder() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// collectSessions reads every row (database/sql's rows or pgx's); the
// caller closes them.
func collectSessions(rows interface {
	scanner
	Next() bool
	Err() error
}) ([]Session, error) {
	var out []Session
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, sess)
	}
	return out, rows.Err()
}
