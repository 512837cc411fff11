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

// A directory on the way replaced by a link since the proposal makes the
// file protected where it lands (sub/d linked to ../.git makes
// sub/d/config .git/config), in any root; one that leads out of every
// root is an error; a protection already said is kept.
func TestRejudge(t *testing.T) {
	root := t.TempDir()
	other := t.TempDir()
	for _, d := range []string{".git", "sub/d"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := Proposal{Path: "sub/d/config", Abs: filepath.Join(root, "sub", "d", "config")}
	if q, err := Rejudge([]string{other, root}, p); err != nil || q.Protected != "" {
		t.Errorf("sub/d/config as it was = %q, %v; want it unprotected", q.Protected, err)
	}
	os.RemoveAll(filepath.Join(root, "sub", "d"))
	if err := os.Symlink("../.git", filepath.Join(root, "sub", "d")); err != nil {
		t.Fatal(err)
	}
	if q, err := Rejudge([]string{other, root}, p); err != nil || !strings.Contains(q.Protected, ".git/config") {
		t.Errorf("sub/d/config with sub/d linked to ../.git = %q, %v; want it protected as .git/config", q.Protected, err)
	}
	p.Protected = "said"
	if q, _ := Rejudge([]string{root}, p); q.Protected != "said" {
		t.Errorf("a protection already said became %q", q.Protected)
	}
	os.Remove(filepath.Join(root, "sub", "d"))
	if err := os.Symlink(other, filepath.Join(root, "sub", "d")); err != nil {
		t.Fatal(err)
	}
	if _, err := Rejudge([]string{root}, p); err == nil || !strings.Contains(err.Error(), "outside the workspace") {
		t.Errorf("sub/d linked out of the workspace: %v, want an error", err)
	}
}
