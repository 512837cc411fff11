package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBuildCachePrivate tries to poison the user's Go build cache (and
// npm's) from a contained command: the write is refused, go env GOCACHE
// (npm config get cache) names Reika's own, and go test of a small module
// still runs there. It uses the real
// home and go command, as TestGoTestInside does.
func TestBuildCachePrivate(t *testing.T) {
	goPath, home := needTool(t, "go")
	out, err := exec.Command(goPath, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	userCache := strings.TrimSpace(string(out))
	if err := os.MkdirAll(userCache, 0o755); err != nil {
		t.Fatal(err)
	}
	private := testPrivate(t)
	found := DiscoverCaches(t.Context(), home, os.Getenv, exec.LookPath)
	caches, vars := Private(private, found, "")
	for _, c := range caches {
		if c.Write && (within(c.Path, userCache) || within(userCache, c.Path)) {
			t.Fatalf("Private left %s writable (%s), which holds the user's GOCACHE %s", c.Path, c.Tool, userCache)
		}
	}
	ws := filepath.Join(t.TempDir(), "ws")
	files := map[string]string{
		"go.mod":    "module example.com/tiny\n\ngo 1.26\n",
		"a_test.go": "package a\n\nimport (\n\t\"fmt\"\n\t\"testing\"\n)\n\nfunc TestA(t *testing.T) { fmt.Sprint(1) }\n",
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Join(ws, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := Policy{Workspace: []string{ws}, Temp: t.TempDir(), Home: home, Caches: caches}
	vars = append(vars, "TMPDIR="+p.Temp)
	probe := filepath.Join(userCache, "00", "reika-poison-probe")
	t.Cleanup(func() { os.Remove(probe) })
	// What a planted Makefile would do: write an entry into the user's
	// cache. Granted the caches as found, it can (the test shows the hole);
	// with Private's, it cannot.
	poison := "mkdir -p " + filepath.Dir(probe) + " && echo payload > " + probe
	if got, err := run(t, Policy{Workspace: p.Workspace, Temp: p.Temp, Home: home, Caches: found}, ws, poison); err != nil {
		t.Errorf("granted the user's GOCACHE, the poisoning failed: the test proves nothing\n%s", got)
	}
	os.Remove(probe)
	got, err := run(t, p, ws, poison, vars...)
	if err == nil {
		t.Errorf("a contained command wrote into the user's GOCACHE %s:\n%s", userCache, got)
	}
	if _, serr := os.Stat(probe); serr == nil {
		t.Errorf("%s exists after the command", probe)
	}
	got, err = run(t, p, ws, goPath+" env GOCACHE", vars...)
	if want := filepath.Join(private, "go-build"); err != nil || strings.TrimSpace(got) != want {
		t.Errorf("go env GOCACHE in the sandbox = %q, %v; want %s", got, err, want)
	}
	if npm, err := exec.LookPath("npm"); err == nil {
		userNpm, _ := exec.Command(npm, "config", "get", "cache").Output()
		got, err := run(t, p, ws, npm+" config get cache; touch "+strings.TrimSpace(string(userNpm))+"/reika-poison-probe", vars...)
		if want := filepath.Join(private, "npm"); !strings.HasPrefix(got, want+"\n") || err == nil {
			t.Errorf("npm config get cache, then a write into the user's %s, in the sandbox = %q, %v; want %s and the write refused", userNpm, got, err, want)
		}
	}
	for i := range 2 {
		start := time.Now()
		got, err = run(t, p, ws, goPath+" test -count=1 ./...", append(vars, "GOFLAGS=-mod=readonly", "GOPROXY=off")...)
		if err != nil {
			t.Fatalf("go test in the sandbox, run %d: %v\n%s", i+1, err, got)
		}
		t.Logf("go test in the sandbox, run %d: %.1fs", i+1, time.Since(start).Seconds())
	}
}

// testPrivate is the private cache directory of the tests: kept between
// runs under the user's cache directory, as the server keeps a
// workspace's, so that only the first run pays for a cold Go build cache
// (38 s for go test of one package on two busy cores, against 1.3 s warm).
func testPrivate(t *testing.T) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		return t.TempDir()
	}
	return filepath.Join(base, "reika", "sandbox", "test")
}

// TestCargoInside builds a crate without dependencies in the sandbox with
// the caches of the real home, and tries to plant a crate's source in
// cargo's registry, which the user's own cargo would compile: refused.
func TestCargoInside(t *testing.T) {
	needLandlock(t)
	if testing.Short() {
		t.Skip("runs cargo")
	}
	cargo, err := exec.LookPath("cargo")
	if err != nil {
		t.Skip("no cargo")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip(err)
	}
	caches := DiscoverCaches(t.Context(), home, os.Getenv, exec.LookPath)
	var cargoHome string
	for _, c := range caches {
		if strings.Contains(c.Tool, "CARGO_HOME") && !c.Write {
			cargoHome = c.Path
		}
	}
	if cargoHome == "" {
		t.Skip("CARGO_HOME is not in the home")
	}
	ws := filepath.Join(t.TempDir(), "ws")
	for name, text := range map[string]string{
		"c/Cargo.toml":  "[package]\nname = \"c\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"c/src/main.rs": "fn main() { println!(\"hi\"); }\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := Policy{Workspace: []string{ws}, Temp: t.TempDir(), Home: home, Caches: caches, Exec: []string{filepath.Dir(cargo)}}
	if out, err := run(t, p, filepath.Join(ws, "c"), "cargo build --offline -q", "TMPDIR="+p.Temp); err != nil {
		t.Errorf("cargo build in the sandbox: %v\n%s", err, out)
	}
	src := filepath.Join(cargoHome, "registry", "src", "reika-poison-probe")
	t.Cleanup(func() { os.RemoveAll(src) })
	if out, err := run(t, p, ws, "mkdir -p "+src); err == nil {
		t.Errorf("a contained command made %s:\n%s", src, out)
	}
}
