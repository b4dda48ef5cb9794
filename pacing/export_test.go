package pacing

import "context"

// Beat is one heartbeat, for the external tests.
func Beat(ctx context.Context, b *Budget) { b.beat(ctx) }

// Remembered is how many sent calls the budget keeps for learning.
func Remembered(b *Budget) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.sent)
}
