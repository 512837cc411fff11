package agent

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The build caches of a workspace's commands are Reika's, under the
// user's cache directory, one place per workspace.
func TestPrivateCacheDir(t *testing.T) {
	env := func(v string) func(string) string {
		return func(name string) string {
			if name == "XDG_CACHE_HOME" {
				return v
			}
			return ""
		}
	}
	a := privateCacheDir(env("/c"), "/home/u", []string{"/w/a"})
	b := privateCacheDir(env("/c"), "/home/u", []string{"/w/b"})
	if !strings.HasPrefix(a, "/c/reika/sandbox/") || a == b {
		t.Errorf("privateCacheDir of /w/a, /w/b = %s, %s; want two places under /c/reika/sandbox", a, b)
	}
	if got := privateCacheDir(env("relative"), "/home/u", []string{"/w/a"}); filepath.Dir(got) != "/home/u/.cache/reika/sandbox" {
		t.Errorf("privateCacheDir with a relative XDG_CACHE_HOME = %s, want it under /home/u/.cache", got)
	}
	if got := privateCacheDir(env(""), "/home/u", nil); got != "" {
		t.Errorf("privateCacheDir without folders = %q, want none", got)
	}
}

// The caches of a workspace no session used for a month go; this one's
// and the others' stay.
func TestPrunePrivate(t *testing.T) {
	base := t.TempDir()
	now := time.Now()
	for name, age := range map[string]time.Duration{"mine": 90 * 24 * time.Hour, "recent": 24 * time.Hour, "old": 31 * 24 * time.Hour} {
		d := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Join(d, "go-build"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(d, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	prunePrivate(filepath.Join(base, "mine"), now)
	for name, kept := range map[string]bool{"mine": true, "recent": true, "old": false} {
		if _, err := os.Stat(filepath.Join(base, name)); (err == nil) != kept {
			t.Errorf("%s: kept %v, want %v", name, err == nil, kept)
		}
	}
}

// A session's commands get the workspace's own build caches: GOCACHE
// names one under XDG_CACHE_HOME/reika/sandbox, and the user's is not
// writable for them.
func TestContainerBuildCaches(t *testing.T) {
	goPath, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(goPath, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	userCache := strings.TrimSpace(string(out))
	xdg := t.TempDir()
	getenv := func(name string) string {
		if name == "XDG_CACHE_HOME" {
			return xdg
		}
		return os.Getenv(name)
	}
	c, sb := newContainer([]string{t.TempDir()}, t.TempDir(), "", nil, getenv)
	if c == nil {
		t.Skip(sb.Line)
	}
	var gocache string
	for _, kv := range c.Env() {
		if v, ok := strings.CutPrefix(kv, "GOCACHE="); ok {
			gocache = v
		}
	}
	if !strings.HasPrefix(gocache, filepath.Join(xdg, "reika", "sandbox")+string(filepath.Separator)) {
		t.Errorf("GOCACHE of a command = %q, want one under %s", gocache, xdg)
	}
	for _, cache := range c.policy.Caches {
		if cache.Path == userCache && cache.Write {
			t.Errorf("the user's GOCACHE %s is granted writable (%+v)", userCache, cache)
		}
	}
}

// A test binary does not answer the cache program's command, so
// GOCACHEPROG never names it; once the binary GOCACHEPROG names is gone,
// commands get no GOCACHEPROG.
func TestContainerGoCacheProgram(t *testing.T) {
	c, sb := newContainer([]string{t.TempDir()}, t.TempDir(), "", nil, func(name string) string {
		if name == "XDG_CACHE_HOME" {
			return t.TempDir()
		}
		return os.Getenv(name)
	})
	if c == nil {
		t.Skip(sb.Line)
	}
	for _, kv := range c.Env() {
		if strings.HasPrefix(kv, "GOCACHEPROG=") {
			t.Errorf("a test binary is named in %s", kv)
		}
	}
	prog := filepath.Join(t.TempDir(), "reika-lsp")
	if err := os.WriteFile(prog, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	c.prog = prog
	c.env = append(c.env, "GOCACHEPROG="+prog+" gocache")
	if !slices.Contains(c.Env(), "GOCACHEPROG="+prog+" gocache") {
		t.Errorf("GOCACHEPROG is left out while %s is there", prog)
	}
	os.Remove(prog)
	if slices.Contains(c.Env(), "GOCACHEPROG="+prog+" gocache") {
		t.Errorf("GOCACHEPROG names %s, which is gone", prog)
	}
}
