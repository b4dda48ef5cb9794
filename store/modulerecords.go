package store

import (
	"errors"
	"fmt"
	"time"
)

// Record is a record a module keeps for itself (a way in's registrations,
// its courses): the store keeps its value as given and reads nothing in
// it, so a module's records need no table, method, guard or cache entry
// of their own.
type Record struct {
	Module string // the module's name ("lti"): 1 to MaxRecordName bytes
	Kind   string // what the record is, within the module: 1 to MaxRecordName bytes
	// Key names it within its kind: any text of at most MaxRecordKey
	// bytes (NUL and bytes that are no UTF-8 included).
	Key   string
	Value []byte // at most MaxRecordValue bytes
	// At is what lists order by (a registration's time, a course's last
	// launch), to the millisecond.
	At time.Time
}

// Bounds of a record.
const (
	MaxRecordName  = 64
	MaxRecordKey   = 3*MaxKey + 2 // three keys joined (an LMS's issuer, client id and course)
	MaxRecordValue = 64 << 10
	MaxRecordKeys  = 1000 // keys a RecordQuery selects by
)

// PutMode is how PutRecord treats a record already kept under the key.
type PutMode int

// The put modes.
const (
	// Upsert creates the record or replaces the one kept.
	Upsert PutMode = iota
	// Create creates it: one kept under the key is ErrRecordTaken.
	Create
	// Replace replaces the one kept: none is ErrNotFound.
	Replace
)

// ErrRecordTaken: PutRecord(Create) found a record under the key.
var ErrRecordTaken = errors.New("store: a record with this key is kept already")

// RecordQuery selects a module's records of one kind.
type RecordQuery struct {
	Module, Kind string
	// Keys keeps only the records of these keys (nil: every key; at
	// most MaxRecordKeys).
	Keys []string
	// Newest lists the latest At first; otherwise the oldest first. Ties
	// go by key.
	Newest bool
	// Limit bounds the list (0: every record).
	Limit int
}

// CheckRecord refuses a record out of bounds (ErrInvalid).
func CheckRecord(r Record) error {
	if err := CheckRecordName(r.Module, r.Kind); err != nil {
		return err
	}
	switch {
	case len(r.Key) > MaxRecordKey:
		return fmt.Errorf("%w: a record's key is limited to %d bytes", ErrInvalid, MaxRecordKey)
	case len(r.Value) > MaxRecordValue:
		return fmt.Errorf("%w: a record's value is limited to %d bytes", ErrInvalid, MaxRecordValue)
	}
	return nil
}

// CheckRecordName refuses a module or kind name that is empty, longer
// than MaxRecordName or not printable ASCII (ErrInvalid).
func CheckRecordName(names ...string) error {
	for _, n := range names {
		if n == "" || len(n) > MaxRecordName {
			return fmt.Errorf("%w: a record's module and kind are 1 to %d bytes", ErrInvalid, MaxRecordName)
		}
		for i := 0; i < len(n); i++ {
			if n[i] <= ' ' || n[i] > '~' {
				return fmt.Errorf("%w: a record's module and kind are printable ASCII without spaces: %q", ErrInvalid, n)
			}
		}
	}
	return nil
}
