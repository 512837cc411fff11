package agent

import (
	"os"
	"path/filepath"
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
