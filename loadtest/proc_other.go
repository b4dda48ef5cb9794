//go:build !linux

package loadtest

import (
	"errors"
	"time"
)

// processStat is what the OS says about a process's CPU and memory.
type processStat struct {
	cpu      time.Duration
	rss, hwm float64
}

var errNoProc = errors.New("reading another process's CPU time needs Linux's /proc")

func listenerPID(int) (int, error) { return 0, errNoProc }

func readProcessStat(int) (processStat, error) { return processStat{}, errNoProc }
