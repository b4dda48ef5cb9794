package storetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ssobridge/ssobridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// records lists the keys and values of a module's records of one kind.
func records(t *testing.T, s store.Store, q store.RecordQuery) (keys, values []string) {
	t.Helper()
	list, err := s.Records(context.Background(), q)
	require.NoError(t, err)
	for _, r := range list {
		assert.Equal(t, q.Module, r.Module)
		assert.Equal(t, q.Kind, r.Kind)
		keys, values = append(keys, r.Key), append(values, string(r.Value))
	}
	return keys, values
}

// testModuleRecords: a module's records are kept by (module, kind, key),
// created once, replaced only when there, listed by time either way with
// ties by key, selected by keys and bounded; deleting one leaves the
// others; one module's or kind's records never show as another's.
func testModuleRecords(t *testing.T, s store.Store) {
	ctx := context.Background()
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	rec := func(kind, key, value string, min int) store.Record {
		return store.Record{Module: "lms", Kind: kind, Key: key, Value: []byte(value), At: at.Add(time.Duration(min) * time.Minute)}
	}
	keys, _ := records(t, s, store.RecordQuery{Module: "lms", Kind: "platform"})
	assert.Empty(t, keys)

	require.NoError(t, s.PutRecord(ctx, rec("platform", "b", `{"n":1}`, 1), store.Create))
	assert.ErrorIs(t, s.PutRecord(ctx, rec("platform", "b", `{"n":2}`, 1), store.Create), store.ErrRecordTaken, "the same key twice")
	require.NoError(t, s.PutRecord(ctx, rec("platform", "a", `{"n":3}`, 1), store.Create), "the same time: ties go by key")
	require.NoError(t, s.PutRecord(ctx, rec("platform", "c", `{"n":4}`, 0), store.Create))
	require.NoError(t, s.PutRecord(ctx, rec("course", "b", `{"course":true}`, 5), store.Create), "another kind, the same key")
	require.NoError(t, s.PutRecord(ctx, store.Record{Module: "other", Kind: "platform", Key: "b", Value: []byte("x"), At: at}, store.Create),
		"another module, the same kind and key")

	keys, values := records(t, s, store.RecordQuery{Module: "lms", Kind: "platform"})
	assert.Equal(t, []string{"c", "a", "b"}, keys, "the oldest first, ties by key")
	assert.Equal(t, []string{`{"n":4}`, `{"n":3}`, `{"n":1}`}, values, "the value as it was given, the refused second put changed nothing")
	keys, _ = records(t, s, store.RecordQuery{Module: "lms", Kind: "platform", Newest: true, Limit: 2})
	assert.Equal(t, []string{"a", "b"}, keys, "the latest first, ties by key, at most the limit")
	keys, _ = records(t, s, store.RecordQuery{Module: "lms", Kind: "platform", Keys: []string{"c", "b", "nobody"}})
	assert.Equal(t, []string{"c", "b"}, keys, "only the keys asked for")
	keys, _ = records(t, s, store.RecordQuery{Module: "lms", Kind: "platform", Keys: []string{}})
	assert.Empty(t, keys, "no keys asked for: none")

	require.NoError(t, s.PutRecord(ctx, rec("platform", "c", `{"n":5}`, 9), store.Replace))
	assert.ErrorIs(t, s.PutRecord(ctx, rec("platform", "nobody", "x", 0), store.Replace), store.ErrNotFound, "replacing nothing creates nothing")
	require.NoError(t, s.PutRecord(ctx, rec("platform", "d", `{"n":6}`, 2), store.Upsert), "upsert creates")
	require.NoError(t, s.PutRecord(ctx, rec("platform", "a", `{"n":7}`, 1), store.Upsert), "upsert replaces")
	keys, values = records(t, s, store.RecordQuery{Module: "lms", Kind: "platform"})
	assert.Equal(t, []string{"a", "b", "d", "c"}, keys)
	assert.Equal(t, []string{`{"n":7}`, `{"n":1}`, `{"n":6}`, `{"n":5}`}, values)

	require.NoError(t, s.DeleteRecord(ctx, "lms", "platform", "a"))
	assert.ErrorIs(t, s.DeleteRecord(ctx, "lms", "platform", "a"), store.ErrNotFound)
	keys, _ = records(t, s, store.RecordQuery{Module: "lms", Kind: "platform"})
	assert.Equal(t, []string{"b", "d", "c"}, keys)
	keys, values = records(t, s, store.RecordQuery{Module: "lms", Kind: "course"})
	assert.Equal(t, []string{"b"}, keys, "another kind's record under the same key stays")
	assert.Equal(t, []string{`{"course":true}`}, values)
	keys, _ = records(t, s, store.RecordQuery{Module: "other", Kind: "platform"})
	assert.Equal(t, []string{"b"}, keys, "another module's record stays")
}

// testModuleRecordsBounded: a record out of bounds is refused and changes
// nothing.
func testModuleRecordsBounded(t *testing.T, s store.Store) {
	ctx := context.Background()
	ok := store.Record{Module: "lms", Kind: "course", Key: strings.Repeat("k", store.MaxRecordKey), Value: make([]byte, store.MaxRecordValue)}
	require.NoError(t, s.PutRecord(ctx, ok, store.Create), "a key and a value at their bounds")
	for name, r := range map[string]store.Record{
		"key too long":      {Module: "lms", Kind: "course", Key: strings.Repeat("k", store.MaxRecordKey+1)},
		"value too long":    {Module: "lms", Kind: "course", Key: "v", Value: make([]byte, store.MaxRecordValue+1)},
		"no module":         {Kind: "course", Key: "m"},
		"no kind":           {Module: "lms", Key: "m"},
		"a space in a kind": {Module: "lms", Kind: "a course", Key: "m"},
		"module too long":   {Module: strings.Repeat("m", store.MaxRecordName+1), Kind: "course", Key: "m"},
	} {
		for _, mode := range []store.PutMode{store.Create, store.Upsert} {
			assert.ErrorIs(t, s.PutRecord(ctx, r, mode), store.ErrInvalid, name)
		}
	}
	_, err := s.Records(ctx, store.RecordQuery{Module: "lms"})
	assert.ErrorIs(t, err, store.ErrInvalid, "a query without its kind")
	_, err = s.Records(ctx, store.RecordQuery{Module: "lms", Kind: "course", Keys: make([]string, store.MaxRecordKeys+1)})
	assert.ErrorIs(t, err, store.ErrInvalid, "a query of too many keys")
	assert.ErrorIs(t, s.DeleteRecord(ctx, "", "course", "k"), store.ErrInvalid)
	keys, _ := records(t, s, store.RecordQuery{Module: "lms", Kind: "course"})
	assert.Equal(t, []string{ok.Key}, keys, "nothing else kept")
}
