package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ssobridge/ssobridge/store"
)

// The modules' own records (module_records): a value the store does not
// read, under (module, kind, key), with the time lists order by.

// PutRecord keeps r as mode says.
func (s *sqlStore) PutRecord(ctx context.Context, r store.Record, mode store.PutMode) error {
	if err := store.CheckRecord(r); err != nil {
		return err
	}
	args := []any{r.Module, r.Kind, keyIn(r.Key), r.Value, ms(r.At)}
	var q string
	switch mode {
	case store.Create:
		q = "INSERT INTO module_records (module, kind, rkey, value, at) VALUES ($1, $2, $3, $4, $5)"
	case store.Replace:
		q = "UPDATE module_records SET value = $4, at = $5 WHERE module = $1 AND kind = $2 AND rkey = $3"
	case store.Upsert:
		q = `INSERT INTO module_records (module, kind, rkey, value, at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (module, kind, rkey) DO UPDATE SET value = excluded.value, at = excluded.at`
	default:
		return fmt.Errorf("%w: put mode %d", store.ErrInvalid, mode)
	}
	n, err := s.exec(ctx, q, args...)
	switch {
	case err != nil && mode == store.Create && s.d.unique(err):
		return fmt.Errorf("%w: %s %s", store.ErrRecordTaken, r.Module, r.Kind)
	case err != nil:
		return fmt.Errorf("records: put %s %s: %w", r.Module, r.Kind, err)
	case n == 0 && mode == store.Replace:
		return store.ErrNotFound
	}
	return nil
}

// Records lists the records q selects.
func (s *sqlStore) Records(ctx context.Context, q store.RecordQuery) ([]store.Record, error) {
	if err := store.CheckRecordName(q.Module, q.Kind); err != nil {
		return nil, err
	}
	if len(q.Keys) > store.MaxRecordKeys {
		return nil, fmt.Errorf("%w: a query selects at most %d keys", store.ErrInvalid, store.MaxRecordKeys)
	}
	if q.Keys != nil && len(q.Keys) == 0 {
		return nil, nil
	}
	var sb strings.Builder
	args := []any{q.Module, q.Kind}
	sb.WriteString("SELECT rkey, value, at FROM module_records WHERE module = $1 AND kind = $2")
	if q.Keys != nil {
		sb.WriteString(" AND rkey IN (")
		for i, k := range q.Keys {
			if i > 0 {
				sb.WriteString(", ")
			}
			args = append(args, keyIn(k))
			fmt.Fprintf(&sb, "$%d", len(args))
		}
		sb.WriteString(")")
	}
	if q.Newest {
		sb.WriteString(" ORDER BY at DESC, rkey")
	} else {
		sb.WriteString(" ORDER BY at, rkey")
	}
	if q.Limit > 0 {
		args = append(args, q.Limit)
		fmt.Fprintf(&sb, " LIMIT $%d", len(args))
	}
	rows, err := s.query(ctx, sb.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("records: list %s %s: %w", q.Module, q.Kind, err)
	}
	defer rows.Close()
	var out []store.Record
	for rows.Next() {
		r := store.Record{Module: q.Module, Kind: q.Kind}
		var at int64
		if err := rows.Scan(&r.Key, &r.Value, &at); err != nil {
			return nil, fmt.Errorf("records: list %s %s: %w", q.Module, q.Kind, err)
		}
		r.Key, r.At = keyOut(r.Key), time.UnixMilli(at).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

// DeleteRecord removes a record.
func (s *sqlStore) DeleteRecord(ctx context.Context, module, kind, key string) error {
	if err := store.CheckRecordName(module, kind); err != nil {
		return err
	}
	n, err := s.exec(ctx, "DELETE FROM module_records WHERE module = $1 AND kind = $2 AND rkey = $3", module, kind, keyIn(key))
	if err != nil {
		return fmt.Errorf("records: delete %s %s: %w", module, kind, err)
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}
