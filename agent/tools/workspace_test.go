package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfinement tries to leave the workspace every way a path can, with
// every tool that takes one.
func TestConfinement(t *testing.T) {
	outside := workspace(t, map[string]string{"secret.txt": "secret\n"})
	root := workspace(t, map[string]string{"a/b.txt": "b\n", "ok.txt": "ok\n"})
	mustSymlink(t, "/etc", filepath.Join(root, "etc"))
	mustSymlink(t, outside, filepath.Join(root, "linkdir"))
	mustSymlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, "secretlink"))
	mustSymlink(t, filepath.Join(root, "ok.txt"), filepath.Join(root, "inlink"))
	mustSymlink(t, filepath.Join(outside, "missing.txt"), filepath.Join(root, "dangling"))
	s := newSet(t, root, Config{})

	tests := []struct {
		path string
		want string // in the error; "" means allowed
	}{
		{"../x", "outside the workspace"},
		{"a/../../x", "outside the workspace"},
		{"/etc/passwd", "outside the workspace"},
		{outside + "/secret.txt", "outside the workspace"},
		{"etc/passwd", "symbolic link"},
		{"linkdir/secret.txt", "symbolic link"},
		{"linkdir/new.txt", "symbolic link"},
		{"secretlink", "symbolic link"},
		{"dangling", "broken symbolic link"},
		{"a\x00b", "NUL"},
		{"", "empty"},
		{"a/../ok.txt", ""},
		{"./a/b.txt", ""},
		{root + "/a/b.txt", ""},
		{"inlink", ""},
		{"a/new/file.txt", ""},
	}
	for _, tt := range tests {
		_, err := s.resolve(tt.path, false)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("resolve(%q) = %v, want no error", tt.path, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("resolve(%q) = %v, want an error about %q", tt.path, err, tt.want)
		}
	}

	// Each tool that takes a path refuses the escapes.
	for _, p := range []string{"../x", "a/../../x", "/etc/passwd", "etc/passwd", "linkdir/secret.txt", "secretlink", "a\x00b"} {
		for _, tc := range []struct {
			tool string
			args map[string]any
		}{
			{"read", map[string]any{"path": p}},
			{"grep", map[string]any{"pattern": "secret", "path": p}},
			{"edit", map[string]any{"path": p, "old_text": "secret", "new_text": "public"}},
			{"write", map[string]any{"path": p, "content": "x"}},
		} {
			res := call(t, s, tc.tool, tc.args)
			if !res.Error || strings.Contains(res.Content, "secret\n") {
				t.Errorf("%s(%q) = %q, want a refusal", tc.tool, p, res.Content)
			}
		}
	}
	for _, pat := range []string{"../*", "a/../../*", outside + "/*"} {
		if res := call(t, s, "glob", map[string]any{"pattern": pat}); !res.Error {
			t.Errorf("glob(%q) = %q, want a refusal", pat, res.Content)
		}
	}
	// Walks do not follow links out either.
	if res := call(t, s, "grep", map[string]any{"pattern": "secret"}); strings.Contains(res.Content, "secretlink") || strings.Contains(res.Content, "linkdir") {
		t.Errorf("grep(secret) = %q, want no match through links that leave the workspace", res.Content)
	}
	if res := call(t, s, "glob", map[string]any{"pattern": "**"}); strings.Contains(res.Content, "secret") {
		t.Errorf("glob(**) = %q, want no path through links that leave the workspace", res.Content)
	}
}

func TestSpillDirReadable(t *testing.T) {
	root := workspace(t, nil)
	spill := workspace(t, map[string]string{"bash-1.txt": "one\ntwo\n"})
	s := newSet(t, root, Config{SpillDir: spill})
	p := filepath.Join(spill, "bash-1.txt")
	if res := call(t, s, "read", map[string]any{"path": p}); res.Error || !strings.Contains(res.Content, "     2\ttwo") {
		t.Errorf("read(spill file) = %q, want its lines", res.Content)
	}
	for _, tool := range []string{"edit", "write"} {
		if res := call(t, s, tool, map[string]any{"path": p, "old_text": "one", "new_text": "1", "content": "x"}); !res.Error {
			t.Errorf("%s(spill file) = %q, want a refusal", tool, res.Content)
		}
	}
}

func TestMultipleFolders(t *testing.T) {
	a := workspace(t, map[string]string{"a.txt": "in a\n"})
	b := workspace(t, map[string]string{"b.txt": "in b\n"})
	s := newSet(t, a, Config{Folders: []string{a, b}})
	if res := call(t, s, "read", map[string]any{"path": "b.txt"}); res.Error || !strings.Contains(res.Content, "in b") || res.Payload.Path != filepath.Join(b, "b.txt") {
		t.Errorf("read(b.txt) = %q (path %q), want the file of the second folder, named absolutely", res.Content, res.Payload.Path)
	}
	if res := call(t, s, "read", map[string]any{"path": filepath.Join(b, "b.txt")}); res.Error {
		t.Errorf("read(abs in second folder) = %q, want its text", res.Content)
	}
}

func TestNewErrors(t *testing.T) {
	file := filepath.Join(workspace(t, map[string]string{"f": ""}), "f")
	for _, cfg := range []Config{
		{},
		{Folders: []string{"relative"}},
		{Folders: []string{"/does/not/exist"}},
		{Folders: []string{file}},
		{Folders: []string{t.TempDir()}, SpillDir: "relative"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) = nil error, want one", cfg)
		}
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
}
