package pgtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ssobridge/ssobridge/internal/skipnote"
)

// Throwaway is a PostgreSQL server of a test's own, made with the
// machine's initdb and pg_ctl in a temporary folder and listening on a
// free port of 127.0.0.1, for tests that stop, kill and freeze the
// database: never the machine's own server. Without PostgreSQL's binaries
// the test skips, unless the PostgreSQL tests are on (EnvDSN set, as in
// CI), where it fails.
type Throwaway struct {
	t    testing.TB
	bin  string // PostgreSQL's bin folder
	dir  string // the data folder (also the socket's)
	port int
	as   []string // runs a command as the postgres user when this is root
	// DSN is the server's URL, database postgres, user postgres.
	DSN string
}

// StartThrowaway makes and starts a throwaway server, removed after the
// test.
func StartThrowaway(t testing.TB) *Throwaway {
	t.Helper()
	bin := binDir()
	if bin == "" {
		msg := "no PostgreSQL server binaries (initdb, pg_ctl) under /usr/lib/postgresql/*/bin; install postgresql (.ci/run does)"
		if os.Getenv(EnvDSN) != "" {
			t.Fatal(msg)
		}
		skipnote.Skip(t, "tests with a PostgreSQL server of their own", msg)
	}
	s := &Throwaway{t: t, bin: bin}
	root, err := os.MkdirTemp("", "ssobridge-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	s.dir = filepath.Join(root, "data")
	if os.Geteuid() == 0 {
		// initdb refuses to run as root: the server runs as postgres.
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root, a throwaway PostgreSQL needs the postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chmod(root, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(s.dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(s.dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		s.as = []string{"runuser", "-u", "postgres", "--"}
	}
	s.port = freePort(t)
	s.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port)
	s.run("initdb", "-D", s.dir, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8")
	s.Start()
	t.Cleanup(func() {
		s.Thaw() // a test that failed while it was frozen
		_ = s.command("pg_ctl", "-D", s.dir, "-m", "immediate", "-w", "stop").Run()
	})
	return s
}

// binDir is the newest PostgreSQL bin folder with initdb and pg_ctl.
func binDir() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "pg_ctl")); err == nil {
			return dirs[i]
		}
	}
	return ""
}

func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func (s *Throwaway) command(name string, args ...string) *exec.Cmd {
	argv := append(append(append([]string{}, s.as...), filepath.Join(s.bin, name)), args...)
	return exec.Command(argv[0], argv[1:]...)
}

func (s *Throwaway) run(name string, args ...string) {
	s.t.Helper()
	if out, err := s.command(name, args...).CombinedOutput(); err != nil {
		s.t.Fatalf("%s: %v\n%s", name, err, out)
	}
}

// Start starts the server and waits until it accepts connections.
func (s *Throwaway) Start() {
	s.t.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100", s.port, s.dir)
	s.run("pg_ctl", "-D", s.dir, "-o", opts, "-l", filepath.Join(s.dir, "server.log"), "-w", "-t", "30", "start")
}

// Stop shuts the server down cleanly (fast: sessions are ended).
func (s *Throwaway) Stop() {
	s.t.Helper()
	s.run("pg_ctl", "-D", s.dir, "-m", "fast", "-w", "stop")
}

// Kill kills the server and its backends with SIGKILL, as a crash would,
// and waits until they are gone.
func (s *Throwaway) Kill() {
	s.t.Helper()
	pids := s.processes()
	s.signal(pids, syscall.SIGKILL)
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond) // polling a process's exit: there is no event to wait on
		}
	}
}

// Freeze stops the server and its backends (SIGSTOP): connections stay
// open and nothing answers, as with a frozen host or a lost network.
func (s *Throwaway) Freeze() { s.signal(s.processes(), syscall.SIGSTOP) }

// Thaw resumes a frozen server.
func (s *Throwaway) Thaw() { s.signal(s.processes(), syscall.SIGCONT) }

// TerminateBackends ends every other session on the server
// (pg_terminate_backend), as an operator's or a failover's cleanup would.
func (s *Throwaway) TerminateBackends(ctx context.Context) int {
	s.t.Helper()
	conn, err := pgx.Connect(ctx, s.DSN)
	if err != nil {
		s.t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'").Scan(&n); err != nil {
		s.t.Fatal(err)
	}
	return n
}

func (s *Throwaway) signal(pids []int, sig syscall.Signal) {
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig)
	}
}

// processes are the postmaster (from postmaster.pid) and its children.
func (s *Throwaway) processes() []int {
	b, err := os.ReadFile(filepath.Join(s.dir, "postmaster.pid"))
	if err != nil {
		return nil
	}
	pm, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil {
		return nil
	}
	pids := []int{pm}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after ")".
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pm) {
			pids = append(pids, pid)
		}
	}
	return pids
}
