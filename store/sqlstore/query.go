package sqlstore

import (
	"strconv"
	"strings"
	"time"

	"github.com/ssobridge/ssobridge/mailaddr"
	"github.com/ssobridge/ssobridge/store"
)

// Pieces of the queries sqlStore builds.

// likePattern is the LIKE pattern (with \ as escape) of a case-insensitive
// substring search; "" for no search.
func likePattern(search string) string {
	q := strings.TrimSpace(search)
	if q == "" {
		return ""
	}
	return "%" + strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(strings.ToLower(q)) + "%"
}

// accountWhere is the WHERE clause of f (or "") and its arguments.
func accountWhere(f store.AccountFilter) (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, strings.ReplaceAll(cond, "$n", "$"+strconv.Itoa(len(args))))
	}
	if like := likePattern(f.Search); like != "" {
		add(`(email_key LIKE $n ESCAPE '\' OR lower(first_name || ' ' || last_name) LIKE $n ESCAPE '\')`, like)
	}
	if f.Email != "" {
		add("email_key = $n", mailaddr.Key(strings.TrimSpace(f.Email)))
	}
	if f.ExternalID != "" {
		add("external_id = $n", f.ExternalID)
	}
	if f.ManagedBy != "" {
		add("managed_by = $n", f.ManagedBy)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// auditWhere is the WHERE clause of f (or "") and its arguments; after
// above 0 keeps the events with a larger id.
func auditWhere(f store.AuditFilter, after int64) (string, []any) {
	var conds []string
	var args []any
	add := func(col string, v any) {
		args = append(args, v)
		conds = append(conds, col+" = $"+strconv.Itoa(len(args)))
	}
	if after > 0 {
		args = append(args, after)
		conds = append(conds, "id > $"+strconv.Itoa(len(args)))
	}
	if f.AccountID != 0 {
		add("account_id", f.AccountID)
	}
	if f.Kind != "" {
		add("kind", f.Kind)
	}
	if f.Outcome != "" {
		add("outcome", f.Outcome)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

const eventCols = "id, at, kind, COALESCE(account_id, 0), email, outcome, platform_calls, latency_ms, detail, request_id"

// collectEvents reads every row of eventCols; the caller closes them.
func collectEvents(rows interface {
	scanner
	Next() bool
	Err() error
}) ([]store.Event, error) {
	var out []store.Event
	for rows.Next() {
		var e store.Event
		var at, lat int64
		if err := rows.Scan(&e.ID, &at, &e.Kind, &e.AccountID, &e.Email, &e.Outcome, &e.PlatformCalls, &lat, &e.Detail, &e.RequestID); err != nil {
			return nil, err
		}
		e.At = time.UnixMilli(at).UTC()
		e.Latency = time.Duration(lat) * time.Millisecond
		out = append(out, e)
	}
	return out, rows.Err()
}
