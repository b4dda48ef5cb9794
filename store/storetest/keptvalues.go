package storetest

import (
	"context"
	"testing"

	"github.com/ssobridge/ssobridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testKeptValues(t *testing.T, s store.Store) {
	ctx := context.Background()
	_, err := s.KeptValue(ctx, "lti-tool-key")
	require.ErrorIs(t, err, store.ErrNotFound)
	v, err := s.KeepValue(ctx, "lti-tool-key", "first")
	require.NoError(t, err)
	assert.Equal(t, "first", v)
	v, err = s.KeepValue(ctx, "lti-tool-key", "second")
	require.NoError(t, err)
	assert.Equal(t, "first", v, "the first value kept stays")
	v, err = s.KeptValue(ctx, "lti-tool-key")
	require.NoError(t, err)
	assert.Equal(t, "first", v)
	v, err = s.KeepValue(ctx, "another", "x")
	require.NoError(t, err)
	assert.Equal(t, "x", v)
}
