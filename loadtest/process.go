package loadtest

import (
	"fmt"
	"math"
	"runtime"
	"runtime/metrics"
	"slices"
	"time"
)

// processSample is what the whole process (bridge, emulator and load
// generator) had spent at one moment. The difference of two samples
// taken around the measured phase says how much work a launch cost and
// how long goroutines waited for a CPU: the first tells a slower machine
// (CPU per launch up) from a slower bridge, the second is where latency
// goes on two cores that are not busy.
type processSample struct {
	cpu     time.Duration // user + system; 0 where the OS does not say
	created uint64        // goroutines created
	gcs     uint32
	sched   []uint64 // scheduler latency histogram counts
	buckets []float64
}

func sampleProcess() processSample {
	samples := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}, {Name: "/sched/latencies:seconds"}}
	metrics.Read(samples)
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	s := processSample{cpu: processCPU(), gcs: m.NumGC}
	if samples[0].Value.Kind() == metrics.KindUint64 { // KindBad on a Go without the metric
		s.created = samples[0].Value.Uint64()
	}
	if samples[1].Value.Kind() == metrics.KindFloat64Histogram {
		h := samples[1].Value.Float64Histogram()
		s.sched, s.buckets = slices.Clone(h.Counts), h.Buckets
	}
	return s
}

// processCost is the difference of two samples.
type processCost struct {
	cpu                time.Duration
	created            uint64
	gcs                uint32
	schedP50, schedP99 time.Duration // upper bounds of the histogram buckets
}

func (s processSample) since(before processSample) processCost {
	c := processCost{cpu: s.cpu - before.cpu, created: s.created - before.created, gcs: s.gcs - before.gcs}
	if len(s.sched) == 0 || len(before.sched) != len(s.sched) {
		return c
	}
	counts := make([]uint64, len(s.sched))
	var total uint64
	for i := range counts {
		counts[i] = s.sched[i] - before.sched[i]
		total += counts[i]
	}
	quantile := func(p float64) time.Duration {
		var acc uint64
		for i, n := range counts {
			acc += n
			if total > 0 && float64(acc) >= p*float64(total) {
				upper := s.buckets[i+1]
				if math.IsInf(upper, 1) {
					upper = s.buckets[i]
				}
				if math.IsInf(upper, 0) {
					return 0
				}
				return time.Duration(upper * float64(time.Second))
			}
		}
		return 0
	}
	c.schedP50, c.schedP99 = quantile(0.50), quantile(0.99)
	return c
}

// cpuPerLaunch is the CPU time per launch in whole microseconds, "-" where
// the OS does not say.
func (c processCost) cpuPerLaunch(launches int64) string {
	if c.cpu <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", float64(c.cpu.Microseconds())/float64(max(launches, 1)))
}

// perLaunch formats the cost for the report.
func (c processCost) perLaunch(launches int64) string {
	return fmt.Sprintf("CPU %s µs per launch, %.1f goroutines created per launch, %d GCs, scheduler latency p50 %s p99 %s",
		c.cpuPerLaunch(launches), float64(c.created)/float64(max(launches, 1)), c.gcs,
		c.schedP50.Round(time.Microsecond), c.schedP99.Round(time.Microsecond))
}
