package pacing

import "context"

// Beat is one heartbeat, for the external tests.
func Beat(ctx context.Context, b *Budget) { b.beat(ctx) }
