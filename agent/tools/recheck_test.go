package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file judged at its proposal and linked elsewhere before it is written
// fails the check again: outside the workspace, or to a protected path the
// proposal did not name; left as it was, it passes.
func TestRecheck(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(root, "a.go"), filepath.Join(root, ".git", "config"), filepath.Join(outside, "rc")} {
		if err := os.WriteFile(f, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := Proposal{Path: "a.go", Abs: filepath.Join(root, "a.go")}
	if err := Recheck(root, p); err != nil {
		t.Errorf("a file left as it was: %v", err)
	}
	if err := Recheck(root, Proposal{Path: "new/b.go", Abs: filepath.Join(root, "new", "b.go"), Create: true}); err != nil {
		t.Errorf("a file to create: %v", err)
	}
	for _, tc := range []struct{ to, want string }{
		{filepath.Join(outside, "rc"), "outside the workspace"},
		{filepath.Join(root, ".git", "config"), ".git/config"},
	} {
		os.Remove(p.Abs)
		if err := os.Symlink(tc.to, p.Abs); err != nil {
			t.Fatal(err)
		}
		if err := Recheck(root, p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("a.go linked to %s since: %v, want an error naming %q", tc.to, err, tc.want)
		}
	}
}
