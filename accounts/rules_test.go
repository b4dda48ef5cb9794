package accounts

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/accounts/regulation"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Names of an account made for a portal or IdP user read as names.
func TestNamesFor(t *testing.T) {
	for _, tc := range []struct{ email, given, family, full, first, last string }{
		{"ada@x.example", "Ada", "Lovelace", "", "Ada", "Lovelace"},
		{"ada@x.example", "", "", "Ada King Lovelace", "Ada King", "Lovelace"},
		{"ada@x.example", "", "", "", "Ada", "(x.example)"},
		{"ada.lovelace@x.example", "", "", "", "Ada", "Lovelace"},
		{"ada_king-lovelace+video@x.example", "", "", "", "Ada", "King Lovelace"},
		{"McAda@x.example", "", "", "", "McAda", "(x.example)"},
		{"ada@x.example", "Ada", "", "", "Ada", "(x.example)"},
		{"grace.hopper@x.example", "", "Hopper", "", "Grace", "Hopper"},
		{"ada@x.example", " ", " ", "Mononym", "Mononym", "(x.example)"},
		{"..@x.example", "", "", "", "..", "(x.example)"},
	} {
		first, last := NamesFor(tc.email, Names{Given: tc.given, Family: tc.family, Full: tc.full})
		assert.Equal(t, [2]string{tc.first, tc.last}, [2]string{first, last}, "%+v", tc)
	}
}

// FindOrCreate finds an account by email, makes one without a password
// (named by NamesFor) when allowed, answers ErrNotFound when not, and two
// first arrivals at once make one account.
func TestFindOrCreate(t *testing.T) {
	ctx := context.Background()
	s, err := sqlstore.OpenSQLite(ctx, t.TempDir()+"/db.sqlite", nil)
	require.NoError(t, err)
	defer s.Close()
	_, err = FindOrCreate(ctx, s, "ada.lovelace@example.com", Names{}, false)
	assert.ErrorIs(t, err, store.ErrNotFound, "not allowed to create")
	a, err := FindOrCreate(ctx, s, "ada.lovelace@example.com", Names{}, true)
	require.NoError(t, err)
	assert.Equal(t, "Ada Lovelace", a.Name())
	assert.Equal(t, passhash.NoPassword, a.PasswordHash)
	again, err := FindOrCreate(ctx, s, "ADA.lovelace@example.com", Names{Given: "Other"}, true)
	require.NoError(t, err)
	assert.Equal(t, a.ID, again.ID, "found, not made again")
	assert.Equal(t, "Ada Lovelace", again.Name(), "names are those of the first arrival")

	results := make(chan store.Account, 10)
	for range 10 {
		go func() {
			a, err := FindOrCreate(ctx, s, "grace@example.com", Names{Given: "Grace", Family: "Hopper"}, true)
			assert.NoError(t, err)
			results <- a
		}()
	}
	first := <-results
	for range 9 {
		assert.Equal(t, first.ID, (<-results).ID, "one account for ten first arrivals")
	}
}

func TestParseCSV(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		emails   []string
		problems []string
	}{
		{"header and rows", "Email,firstName,lastName\na@example.com,A,A\n\nb@example.com,B,B", []string{"a@example.com", "b@example.com"}, nil},
		{"no header", "a@example.com,A,A", []string{"a@example.com"}, nil},
		{"quoted field", "\"a@example.com\",\"Ann, the first\",A", []string{"a@example.com"}, nil},
		{"bad quoting stops", "a@example.com,\"A,A\nb@example.com,B,B", nil, []string{"row 1: "}},
		{"missing name", "a@example.com,,A", nil, []string{"row 1: first and last name are required"}},
		{"invalid UTF-8", "a@example.com,A,\xe9t\xe9", nil, []string{"row 1: the last name is not valid UTF-8 text"}},
		{"too many fields", "a@example.com,A,A,extra", nil, []string{"row 1: want 3 fields (email,firstName,lastName), got 4"}},
		// A spreadsheet's "CSV UTF-8" without a header line: the BOM is not
		// part of the first address (else a second account for kim@).
		{"a byte-order mark first", "\ufeffkim@partner.example,Kim,L\nlee@partner.example,Lee,L", []string{"kim@partner.example", "lee@partner.example"}, nil},
		{"a byte-order mark before the header", "\ufeffemail,firstName,lastName\nkim@partner.example,Kim,L", []string{"kim@partner.example"}, nil},
		{"an invisible character in an address", "a@example.com,A,A\nkim\u200b@partner.example,Kim,L", nil, []string{`row 2: "kim\u200b@partner.example" holds an invisible character (U+200B)`}},
		{"a byte-order mark inside an address", "kim\ufeff@partner.example,Kim,L", nil, []string{"row 1: \"kim\\ufeff@partner.example\" holds an invisible character (U+FEFF)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, problems := ParseCSV(tt.text)
			var emails []string
			for _, r := range rows {
				emails = append(emails, r.Email)
				assert.Equal(t, passhash.NoPassword, r.PasswordHash)
			}
			if tt.problems == nil {
				assert.Empty(t, problems)
				assert.Equal(t, tt.emails, emails)
				return
			}
			require.Len(t, problems, len(tt.problems))
			for i, p := range tt.problems {
				assert.Contains(t, problems[i], p)
			}
		})
	}
	var big strings.Builder
	for i := range MaxImportRows + 1 {
		fmt.Fprintf(&big, "u%d@example.com,U,U\n", i)
	}
	_, problems := ParseCSV(big.String())
	assert.Equal(t, []string{fmt.Sprintf("more than %d rows: split the file", MaxImportRows)}, problems)
}

// ImportCSV writes all rows or none: an address that has an account
// already is a problem of its row, and nothing is added.
func TestImportCSV(t *testing.T) {
	ctx := context.Background()
	s, err := sqlstore.OpenSQLite(ctx, t.TempDir()+"/db.sqlite", nil)
	require.NoError(t, err)
	defer s.Close()
	_, err = s.CreateAccount(ctx, store.NewAccount{Email: "b@example.com", FirstName: "B", LastName: "B", PasswordHash: "h"})
	require.NoError(t, err)

	n, problems, err := ImportCSV(ctx, s, "a@example.com,A,A\nB@example.com,B,B\n")
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.Equal(t, []string{"row 2: B@example.com has an account already"}, problems)
	count, _ := s.CountAccounts(ctx)
	assert.Equal(t, 1, count, "nothing written")

	_, problems, err = ImportCSV(ctx, s, "\n\n")
	require.NoError(t, err)
	assert.Contains(t, problems[0], "no rows")

	n, problems, err = ImportCSV(ctx, s, "email,firstName,lastName\na@example.com,A,A\nc@example.com,C,C\n")
	require.NoError(t, err)
	assert.Empty(t, problems)
	assert.Equal(t, 2, n)
	a, err := s.AccountByEmail(ctx, "c@example.com")
	require.NoError(t, err)
	assert.Equal(t, passhash.NoPassword, a.PasswordHash)
}

// SetPassword sets the hash, which ends the sessions, and lifts the bans.
func TestSetPassword(t *testing.T) {
	ctx := context.Background()
	s, err := sqlstore.OpenSQLite(ctx, t.TempDir()+"/db.sqlite", nil)
	require.NoError(t, err)
	defer s.Close()
	a, err := s.CreateAccount(ctx, store.NewAccount{Email: "a@example.com", FirstName: "A", LastName: "A", PasswordHash: "old"})
	require.NoError(t, err)
	reg := regulation.New(s, store.RegulationConfig{MaxRetries: 1, FindTime: time.Minute, BanTime: time.Hour}, time.Now)
	att, _, err := reg.Admit(ctx, a.Email, "192.0.2.1")
	require.NoError(t, err)
	banned, err := reg.Fail(ctx, att)
	require.NoError(t, err)
	require.True(t, banned)

	require.NoError(t, SetPassword(ctx, s, a, "new"))
	got, err := s.AccountByID(ctx, a.ID)
	require.NoError(t, err)
	assert.Equal(t, "new", got.PasswordHash)
	assert.Greater(t, got.SessionEpoch, a.SessionEpoch, "sessions end")
	_, until, err := reg.Admit(ctx, a.Email, "192.0.2.2")
	require.NoError(t, err)
	assert.True(t, until.IsZero(), "the ban on the email is lifted")
}
