package agent

import (
	"path/filepath"
	"strings"
	"testing"
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
