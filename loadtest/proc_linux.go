//go:build linux

package loadtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat:
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// listenerPID finds the process on this host listening on TCP port: the
// socket's inode from /proc/net/tcp{,6}, then the process holding a file
// descriptor for it. It fails when no such process is visible (another
// host, a container, or another user's process without the rights).
func listenerPID(port int) (int, error) {
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			_, hexPort, ok := strings.Cut(fields[1], ":")
			if p, err := strconv.ParseInt(hexPort, 16, 32); ok && err == nil && int(p) == port {
				inodes["socket:["+fields[9]+"]"] = true
			}
		}
		f.Close()
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("nothing listens on port %d on this host", port)
	}
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		if link, err := os.Readlink(fd); err == nil && inodes[link] {
			pid, err := strconv.Atoi(strings.Split(fd, "/")[2])
			if err == nil {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("the process listening on port %d is not visible here", port)
}

// processStat is what /proc/PID says about a process's CPU and memory.
type processStat struct {
	cpu      time.Duration // user + system
	rss, hwm float64       // resident set now and at its peak, MiB
}

// readProcessStat reads /proc/PID/stat and /proc/PID/status.
func readProcessStat(pid int) (processStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return processStat{}, err
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// count fields from the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return processStat{}, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 13 { // state is field 3, utime 14, stime 15
		return processStat{}, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return processStat{}, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	s := processStat{cpu: time.Duration(utime+stime) * time.Second / clockTicks}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return processStat{}, err
	}
	s.rss, s.hwm = statusMiB(status, "VmRSS:"), statusMiB(status, "VmHWM:")
	return s, nil
}

// statusMiB is the value of a "Key:   1234 kB" line of /proc/PID/status
// in MiB (0 when absent).
func statusMiB(status []byte, key string) float64 {
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, key) {
			if f := strings.Fields(line); len(f) >= 2 {
				kb, _ := strconv.Atoi(f[1])
				return float64(kb) / 1024
			}
		}
	}
	return 0
}
