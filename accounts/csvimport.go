package accounts

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ssobridge/ssobridge/accounts/passhash"
	"github.com/ssobridge/ssobridge/mailaddr"
	"github.com/ssobridge/ssobridge/store"
)

// MaxImportRows bounds one CSV import.
const MaxImportRows = 5000

// CSVRow is one account of a CSV import and the line it came from.
type CSVRow struct {
	store.NewAccount
	Line int
}

// ParseCSV reads accounts from lines of email,firstName,lastName (a header
// line is allowed), each without a password. It checks every row and
// reports every problem, by line: a wrong number of fields, a field the
// account rules refuse, an address given twice, more than MaxImportRows.
func ParseCSV(text string) ([]CSVRow, []string) { return ParseCSVUpTo(text, MaxImportRows) }

// ParseCSVUpTo is ParseCSV with another bound on the rows (provisioning
// takes a term's whole roll).
func ParseCSVUpTo(text string, maxRows int) ([]CSVRow, []string) {
	// A spreadsheet's "CSV UTF-8" starts with a byte-order mark: not part
	// of the first address.
	text = strings.TrimPrefix(text, "\ufeff")
	r := csv.NewReader(strings.NewReader(text))
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	var rows []CSVRow
	var problems []string
	seen := map[string]int{}
	for line := 1; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("row %d: %v", line, err))
			break
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if line == 1 && len(rec) == 3 && strings.EqualFold(strings.TrimSpace(rec[0]), "email") {
			continue // header
		}
		if len(rec) != 3 {
			problems = append(problems, fmt.Sprintf("row %d: want 3 fields (email,firstName,lastName), got %d", line, len(rec)))
			continue
		}
		n := store.NewAccount{Email: rec[0], FirstName: rec[1], LastName: rec[2], PasswordHash: passhash.NoPassword}
		if err := n.Normalize(); err != nil {
			problems = append(problems, fmt.Sprintf("row %d: %s", line, strings.TrimPrefix(err.Error(), store.ErrInvalid.Error()+": ")))
			continue
		}
		key := mailaddr.Key(n.Email)
		if first, dup := seen[key]; dup {
			problems = append(problems, fmt.Sprintf("row %d: %s repeats row %d", line, n.Email, first))
			continue
		}
		seen[key] = line
		rows = append(rows, CSVRow{NewAccount: n, Line: line})
		if len(rows) > maxRows {
			problems = append(problems, fmt.Sprintf("more than %d rows: split the file", maxRows))
			break
		}
	}
	return rows, problems
}

// importer is what ImportCSV needs of a store.
type importer interface {
	AccountByEmail(ctx context.Context, email string) (store.Account, error)
	CreateAccounts(ctx context.Context, ns []store.NewAccount) error
}

// ImportCSV adds the accounts of a CSV text (ParseCSV), all or none: when
// any row has a problem (an address with an account already included),
// nothing is written and the problems are returned for the person who
// typed them; err is a store failure.
func ImportCSV(ctx context.Context, s importer, text string) (added int, problems []string, err error) {
	rows, problems := ParseCSV(text)
	if len(problems) == 0 && len(rows) == 0 {
		return 0, []string{"no rows: paste or upload lines of email,firstName,lastName"}, nil
	}
	if len(problems) > 0 {
		return 0, problems, nil
	}
	for _, r := range rows {
		if _, err := s.AccountByEmail(ctx, r.Email); err == nil {
			problems = append(problems, fmt.Sprintf("row %d: %s has an account already", r.Line, r.Email))
		} else if !errors.Is(err, store.ErrNotFound) {
			return 0, nil, err
		}
	}
	if len(problems) > 0 {
		return 0, problems, nil
	}
	ns := make([]store.NewAccount, len(rows))
	for i, r := range rows {
		ns[i] = r.NewAccount
	}
	if err := s.CreateAccounts(ctx, ns); err != nil {
		if errors.Is(err, store.ErrEmailTaken) || errors.Is(err, store.ErrInvalid) {
			return 0, []string{err.Error()}, nil // another import or sign-up raced this one
		}
		return 0, nil, err
	}
	return len(ns), nil, nil
}
