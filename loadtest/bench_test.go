package loadtest

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/cli"
)

// runBenchCmd runs `ssobridge bench args...` in-process.
func runBenchCmd(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = BenchCmd(context.Background(), cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}, args)
	return out.String(), errOut.String(), err
}

// The load tool itself: both load modes finish, every launch succeeds, and
// the figures that are exact (platform calls per launch, new connections)
// are at the floor. Its speed figures are reported, never asserted.
func TestBenchCommand(t *testing.T) {
	for _, mode := range [][]string{
		{"--concurrency", "4"},
		{"--concurrency", "4", "--rate", "400"},
	} {
		t.Run(strings.Join(mode, " "), func(t *testing.T) {
			args := append([]string{"--accounts", "20", "--duration", "300ms"}, mode...)
			out, errOut, err := runBenchCmd(t, args...)
			require.NoError(t, err, errOut)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			last := lines[len(lines)-1]
			for _, want := range []string{"calls_returning=1.00", "calls_unlinked=2.00", "calls_new=3.00", "conns=0", "behind=", "cpu_us_per_launch=", "sched_p99_ms="} {
				assert.Contains(t, last, want)
			}
			assert.Contains(t, out, ", 0 failed")
			assert.Contains(t, out, "goroutines created per launch")
		})
	}
}

// The process cost is the difference of two samples; the scheduler latency
// quantiles come from the histogram counts added between them: the upper
// bound of the bucket (counts[i] is [buckets[i], buckets[i+1])), the last
// finite bound for the open-ended bucket.
func TestProcessCostSince(t *testing.T) {
	buckets := []float64{0, 1e-6, 1e-3, 1e-2, math.Inf(1)}
	before := processSample{cpu: time.Second, created: 100, gcs: 3, sched: []uint64{5, 5, 5, 5}, buckets: buckets}
	tests := []struct {
		name     string
		counts   []uint64
		p50, p99 time.Duration
	}{
		{"mostly fast", []uint64{5 + 98, 5 + 1, 5 + 1, 5}, time.Microsecond, time.Millisecond},
		{"a slow tail", []uint64{5 + 60, 5 + 20, 5 + 20, 5}, time.Microsecond, 10 * time.Millisecond},
		{"open-ended bucket", []uint64{5, 5, 5, 5 + 10}, 10 * time.Millisecond, 10 * time.Millisecond},
		{"nothing ran", []uint64{5, 5, 5, 5}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			after := processSample{cpu: 3 * time.Second, created: 300, gcs: 5, sched: tt.counts, buckets: buckets}
			c := after.since(before)
			assert.Equal(t, 2*time.Second, c.cpu)
			assert.Equal(t, uint64(200), c.created)
			assert.Equal(t, uint32(2), c.gcs)
			assert.Equal(t, tt.p50, c.schedP50)
			assert.Equal(t, tt.p99, c.schedP99)
			assert.Equal(t, "20000", c.cpuPerLaunch(100))
			assert.Contains(t, c.perLaunch(100), "CPU 20000 µs per launch, 2.0 goroutines created per launch, 2 GCs")
			c.cpu = 0
			assert.Equal(t, "-", c.cpuPerLaunch(100), "not measured is not zero")
		})
	}
}

func TestBenchRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--rate", "-1"},
		{"--rate", "NaN"},
		{"--concurrency", "0"},
		{"--duration", "1h"},
		{"--accounts", "0"},
	} {
		out, _, err := runBenchCmd(t, args...)
		var ue cli.UsageError
		require.ErrorAs(t, err, &ue, args)
		assert.Contains(t, ue.Error(), "bench: --", args)
		assert.Empty(t, out, "nothing ran: %v", args)
	}
}
