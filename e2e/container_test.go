package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/skipnote"
)

// containerUID is the image's user (distroless's nonroot).
const containerUID = 65532

// TestContainerImage builds the image and starts it, as a district would
// run it: read-only, as its non-root user, without capabilities. No
// registry is reachable here, so the image is the Dockerfile's runtime
// stage (its user, environment, volume, entry point) on an empty base
// instead of distroless, holding a static binary built with the
// Dockerfile's flags (offlineContainerfile). It answers /healthz and
// /readyz with its version, writes only to its /data volume, and on
// SIGTERM drains and exits 0 within the grace.
func TestContainerImage(t *testing.T) {
	engine := containerEngine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const version = "1.0.0-test"
	commit := strings.Repeat("c0ffee", 6) + "ab12"
	built := time.Now().UTC().Format(time.RFC3339)

	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	run := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, engine, args...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	image := buildTestImage(ctx, t, engine, suffix, "-X github.com/ssobridge/ssobridge/internal/version.version="+version+
		" -X github.com/ssobridge/ssobridge/internal/version.commit="+commit+
		" -X github.com/ssobridge/ssobridge/internal/version.built="+built)

	// The host's network: the test needs no network set-up from the engine.
	// Limits of its own: the engine's defaults (the host's maximum) are
	// more than a sandboxed host, as CI's, lets it set.
	limits := []string{"--network", "host", "--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096"}
	// The platform: the image's own emulator in a second container, as the
	// README has it for a containerised try, with its control endpoint.
	simPort := freePort(t)
	simName := "ssobridge-test-sim-" + suffix
	t.Cleanup(func() { _, _ = exec.Command(engine, "rm", "-f", "-v", simName).CombinedOutput() }) // a failed start too
	out, err := run(append(append([]string{"run", "-d", "--name", simName}, limits...), image,
		"platform-sim", "--addr", "127.0.0.1:"+strconv.Itoa(simPort), "--api-key", "test-key", "--api-secret", "test-secret", "--control")...)
	require.NoError(t, err, "%s", out)
	sim := "http://127.0.0.1:" + strconv.Itoa(simPort)

	port := freePort(t)
	name := "ssobridge-test-" + suffix
	t.Cleanup(func() { _, _ = exec.Command(engine, "rm", "-f", "-v", name).CombinedOutput() })
	out, err = run(append(append([]string{"run", "-d", "--name", name}, limits...),
		"--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--tmpfs", "/tmp",
		"-e", "SSOBRIDGE_SERVER_ADDR=127.0.0.1:"+strconv.Itoa(port), "-e", "SSOBRIDGE_PLATFORM_BASE_URL="+sim,
		"-e", "SSOBRIDGE_PLATFORM_API_KEY=test-key", "-e", "SSOBRIDGE_PLATFORM_API_SECRET=test-secret", image)...)
	require.NoError(t, err, "%s", out)
	logs := func() string { s, _ := run("logs", name); return s }

	base := "http://127.0.0.1:" + strconv.Itoa(port)
	client := &http.Client{Timeout: 5 * time.Second}
	require.Eventually(t, func() bool {
		resp, err := client.Get(base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, time.Minute, 100*time.Millisecond, "no /healthz; the container's log:\n%s", logs())

	t.Run("ready, with its version", func(t *testing.T) {
		resp, err := client.Get(base + "/readyz")
		require.NoError(t, err)
		defer resp.Body.Close()
		var ready struct {
			Ready   bool   `json:"ready"`
			Version string `json:"version"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&ready))
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.True(t, ready.Ready)
		assert.Equal(t, version+" ("+commit[:12]+")", ready.Version)
		out, err := run("exec", name, "/ssobridge", "version")
		require.NoError(t, err, "%s", out)
		assert.Contains(t, out, version)
		assert.Contains(t, out, commit)
		assert.Contains(t, out, built)
		// The image logs JSON: the start line carries the version.
		assert.Contains(t, startLine(t, logs()), `"version":"`+version+" ("+commit[:12]+`)"`)
	})

	t.Run("non-root, read-only, data on its volume", func(t *testing.T) {
		pid, err := run("inspect", "--format", "{{.State.Pid}}", name)
		require.NoError(t, err, "%s", pid)
		uid, gid := processIDs(t, pid)
		assert.Equal(t, containerUID, uid, "the bridge runs as nonroot")
		assert.Equal(t, containerUID, gid)
		ro, err := run("inspect", "--format", "{{.HostConfig.ReadonlyRootfs}}", name)
		require.NoError(t, err, "%s", ro)
		assert.Equal(t, "true", ro)
		// Its store and the demo's session keys are on the volume; a write
		// elsewhere is refused, and a backup (SQLite, while the bridge
		// runs) goes to the volume.
		assert.Contains(t, logs(), `"store":"/data/ssobridge.db"`)
		out, err := run("exec", name, "/ssobridge", "store", "backup", "/ssobridge-backup.db")
		assert.Error(t, err, "%s", out)
		out, err = run("exec", name, "/ssobridge", "store", "backup", "/data/backup.db")
		assert.NoError(t, err, "%s", out)
	})

	t.Run("SIGTERM drains and exits 0 within the grace", func(t *testing.T) { drainsOnStop(ctx, t, engine, name, base, sim, run, logs) })
}

// buildTestImage builds the bridge as the Dockerfile's build line does
// (static, trimmed, stamped by the -X flags in stamp) and an image of it
// from the Dockerfile's runtime stage on an empty base; it is removed when
// the test ends.
func buildTestImage(ctx context.Context, t *testing.T, engine, suffix, stamp string) string {
	dir := t.TempDir()
	// The Dockerfile's build line: static, trimmed, the version stamped.
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w "+stamp,
		"-o", filepath.Join(dir, "ssobridge"), "github.com/ssobridge/ssobridge")
	build.Dir = ".."
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	dockerfile, err := os.ReadFile("../Dockerfile")
	require.NoError(t, err)
	containerfile, err := offlineContainerfile(string(dockerfile))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Containerfile"), []byte(containerfile), 0o644))
	// What distroless brings that the stage relies on: the nonroot user.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "passwd"), []byte(fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", containerUID, containerUID)), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "group"), []byte(fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", containerUID)), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "data"), 0o755))

	image := "localhost/ssobridge-test:" + suffix
	out, err = exec.CommandContext(ctx, engine, "build", "--quiet", "-t", image, "-f", filepath.Join(dir, "Containerfile"), dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Cleanup(func() { _, _ = exec.Command(engine, "rmi", "-f", image).CombinedOutput() })
	return image
}

// drainsOnStop: an account made as an admin would (`user add` in the
// container), and a launch in flight at the stop: the platform answers its
// token call in 1.5 s, within the launch's patience, so the launch ends in
// its request, and the container exits 0 within the grace.
func drainsOnStop(ctx context.Context, t *testing.T, engine, name, base, sim string, run func(...string) (string, error), logs func() string) {
	add := exec.CommandContext(ctx, engine, "exec", "-i", name, "/ssobridge", "user", "add",
		"--email", "pupil@example.com", "--first-name", "Pat", "--last-name", "Pupil")
	add.Stdin = strings.NewReader(testPassword + "\n")
	out, err := add.CombinedOutput()
	require.NoError(t, err, "%s", out)
	b, _ := signedIn(t, base, "pupil@example.com")
	require.Equal(t, http.StatusSeeOther, b.launch().status, "the first launch links the account")
	simControl(t, sim, "/_sim/latency", `{"endpoint":"issue_token","latency_ms":1500}`)
	tok := b.csrf("/")
	launched := make(chan int, 1)
	go func() {
		resp, err := b.c.PostForm(base+"/launch", url.Values{"_csrf": {tok}})
		if err != nil {
			launched <- 0
			return
		}
		resp.Body.Close()
		launched <- resp.StatusCode
	}()
	require.Eventually(t, func() bool {
		resp, err := http.Get(sim + "/_sim/calls")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var calls map[string]int
		return json.NewDecoder(resp.Body).Decode(&calls) == nil && calls["issue_token"] == 2
	}, 30*time.Second, 20*time.Millisecond, "the launch reached the platform")

	start := time.Now()
	stopped, err := run("stop", "--time", "75", name) // SIGTERM; SIGKILL only after the grace
	require.NoError(t, err, "%s", stopped)
	took := time.Since(start)
	assert.Equal(t, http.StatusSeeOther, <-launched, "the launch in flight ended with its redirect")
	code, err := run("inspect", "--format", "{{.State.ExitCode}}", name)
	require.NoError(t, err, "%s", code)
	assert.Equal(t, "0", code, "the container's log:\n%s", logs())
	assert.Less(t, took, 70*time.Second)
	assert.Contains(t, logs(), "shutting down")
}

// TestOfflineContainerfile: the test image's recipe is the Dockerfile's
// runtime stage, checked where no engine runs too.
func TestOfflineContainerfile(t *testing.T) {
	dockerfile, err := os.ReadFile("../Dockerfile")
	require.NoError(t, err)
	got, err := offlineContainerfile(string(dockerfile))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(got, "FROM scratch\nCOPY passwd group /etc/\n"), got)
	assert.NotContains(t, got, "--from=")
	for _, line := range []string{"USER nonroot:nonroot", `ENTRYPOINT ["/ssobridge"]`, `CMD ["serve"]`, `VOLUME ["/data"]`,
		"COPY  ssobridge /ssobridge", "COPY --chown=nonroot:nonroot data /data", "SSOBRIDGE_STORE_DSN=/data/ssobridge.db"} {
		assert.Contains(t, got, line)
	}
	_, err = offlineContainerfile("FROM golang:1.26\nRUN go build\n")
	assert.Error(t, err, "a Dockerfile of one stage has no runtime stage")
}

// containerEngine is podman (or docker) when one can run containers here;
// otherwise the test is skipped, and CI's skip line says how to get one.
func containerEngine(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"podman", "docker"} {
		path, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err = exec.CommandContext(ctx, path, "info").Run()
		cancel()
		if err == nil {
			return path
		}
	}
	skipnote.Skip(t, "the container image test", "no container engine answers `podman info` (apt-get update && apt-get install -y podman runc)")
	return ""
}

// offlineContainerfile is the Dockerfile's last stage, built from local
// files: its base (distroless, which needs a registry) becomes an empty
// image holding distroless's passwd and group, and each COPY from the build
// stage takes the file of the same name from the build context. Its user,
// environment, volume, ports and entry point are the Dockerfile's own.
func offlineContainerfile(dockerfile string) (string, error) {
	stages := strings.Split(dockerfile, "\nFROM ")
	if len(stages) < 2 {
		return "", fmt.Errorf("the Dockerfile has no second stage")
	}
	last := "FROM " + stages[len(stages)-1]
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(last))
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "FROM "):
			b.WriteString("FROM scratch\nCOPY passwd group /etc/\n")
		case strings.HasPrefix(line, "COPY ") && strings.Contains(line, "--from="):
			var flags, paths []string
			for _, f := range fields[1:] {
				if strings.HasPrefix(f, "--from=") {
					continue
				}
				if strings.HasPrefix(f, "--") {
					flags = append(flags, f)
				} else {
					paths = append(paths, f)
				}
			}
			if len(paths) != 2 {
				return "", fmt.Errorf("COPY with %d paths: %q", len(paths), line)
			}
			fmt.Fprintf(&b, "COPY %s %s %s\n", strings.Join(flags, " "), filepath.Base(paths[0]), paths[1])
		default:
			b.WriteString(line + "\n")
		}
	}
	return b.String(), sc.Err()
}

// startLine is the JSON log's "ssobridge listening" line.
func startLine(t *testing.T, log string) string {
	t.Helper()
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `"msg":"ssobridge listening"`) {
			return line
		}
	}
	t.Fatalf("no start line in the log:\n%s", log)
	return ""
}

// processIDs reads a host process's real uid and gid.
func processIDs(t *testing.T, pid string) (uid, gid int) {
	t.Helper()
	status, err := os.ReadFile("/proc/" + pid + "/status")
	require.NoError(t, err)
	for _, line := range bytes.Split(status, []byte("\n")) {
		f := strings.Fields(string(line))
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "Uid:":
			uid, _ = strconv.Atoi(f[1])
		case "Gid:":
			gid, _ = strconv.Atoi(f[1])
		}
	}
	return uid, gid
}
