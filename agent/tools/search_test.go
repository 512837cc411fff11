package tools

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/contextwin"
)

func TestGlob(t *testing.T) {
	root := workspace(t, map[string]string{
		".gitignore":           "node_modules/\n*.tmp\n",
		"main.go":              "",
		"cmd/reika/main.go":    "",
		"cmd/tool/main.go":     "",
		"cmd/tool/helper.go":   "",
		"internal/x/x.go":      "",
		"internal/x/x_test.go": "",
		"web/a.ts":             "",
		"web/b.tsx":            "",
		"node_modules/m.js":    "",
		"scratch.tmp":          "",
	})
	s := newSet(t, root, Config{})
	tests := []struct {
		pattern string
		want    string
		err     bool
	}{
		{"**/*.go", "cmd/reika/main.go\ncmd/tool/helper.go\ncmd/tool/main.go\ninternal/x/x.go\ninternal/x/x_test.go\nmain.go", false},
		{"cmd/*/main.go", "cmd/reika/main.go\ncmd/tool/main.go", false},
		{"**/*_test.go", "internal/x/x_test.go", false},
		{"web/*.{ts,tsx}", "web/a.ts\nweb/b.tsx", false},
		{root + "/cmd/*/main.go", "cmd/reika/main.go\ncmd/tool/main.go", false},
		{"**/*.js", "no files match **/*.js", false},
		{"*.tmp", "no files match *.tmp at the top level; to look in every directory use **/*.tmp", false},
		{"cmd", "no files match cmd; it is a directory: list its files with cmd/* or cmd/**", false},
		{"../**", "", true},
		{"", "", true},
	}
	for _, tt := range tests {
		res := call(t, s, "glob", map[string]any{"pattern": tt.pattern})
		if res.Error != tt.err {
			t.Errorf("glob(%q).Error = %v, want %v (%q)", tt.pattern, res.Error, tt.err, res.Content)
		}
		if tt.want != "" && res.Content != tt.want {
			t.Errorf("glob(%q) = %q, want %q", tt.pattern, res.Content, tt.want)
		}
		if !tt.err && (res.Payload != contextwin.Payload{Kind: contextwin.Search, Path: tt.pattern}) {
			t.Errorf("glob(%q) payload = %+v, want a search of the pattern", tt.pattern, res.Payload)
		}
	}
}

func TestGlobCap(t *testing.T) {
	files := map[string]string{}
	for i := range globMax + 5 {
		files[fmt.Sprintf("d/f%04d.txt", i)] = ""
	}
	s := newSet(t, workspace(t, files), Config{})
	res := call(t, s, "glob", map[string]any{"pattern": "d/*.txt"})
	lines := strings.Split(res.Content, "\n")
	if len(lines) != globMax+1 || lines[globMax] != "… and 5 more (narrow the pattern)" {
		t.Errorf("glob(%d files) = %d lines ending %q, want %d paths and a count of the rest", globMax+5, len(lines), lines[len(lines)-1], globMax)
	}
}

func TestGrep(t *testing.T) {
	root := workspace(t, map[string]string{
		".gitignore":    "ignored/\n",
		"b.go":          "package b\n\nfunc B() {}\nfunc b2() {}\n",
		"a.go":          "package a\r\n\r\nfunc A() {}\r\n",
		"sub/c.go":      "package sub\n// func in a comment\n",
		"ignored/d.go":  "func D() {}\n",
		"bin.dat":       "func\x00binary",
		"long/line.txt": "func " + strings.Repeat("x", 1000) + "\n",
	})
	s := newSet(t, root, Config{})
	tests := []struct {
		pattern, path string
		want          string
		err           bool
	}{
		{pattern: `^func [A-Z]`, want: "a.go:3: func A() {}\nb.go:3: func B() {}"},
		{pattern: `func \w+\(\) \{\}$`, want: "a.go:3: func A() {}\nb.go:3: func B() {}\nb.go:4: func b2() {}"},
		{pattern: `(?i)^PACKAGE SUB`, want: "sub/c.go:1: package sub"},
		{pattern: "func", path: "sub", want: "sub/c.go:2: // func in a comment"},
		{pattern: "func", path: "sub/c.go", want: "sub/c.go:2: // func in a comment"},
		{pattern: "func", path: "ignored", want: "ignored/d.go:1: func D() {}"},
		{pattern: "xxxx", path: "long", want: "long/line.txt:1: func " + strings.Repeat("x", grepLineLen-5) + " … [605 more characters]"},
		{pattern: "nothing here", want: "no matches for nothing here in the workspace"},
		{pattern: "nothing", path: "sub", want: "no matches for nothing in sub"},
		{pattern: "(", err: true, want: "grep: the pattern is not a valid Go regular expression: error parsing regexp: missing closing ): `(`; RE2 has no lookaround or backreferences, and literal ( [ { . * + ? need a backslash"},
		{pattern: "x", path: "missing", err: true, want: "grep: missing does not exist; give a directory or file in the workspace, or leave out path to search it all"},
		{pattern: "", err: true},
	}
	for _, tt := range tests {
		args := map[string]any{"pattern": tt.pattern}
		if tt.path != "" {
			args["path"] = tt.path
		}
		res := call(t, s, "grep", args)
		if res.Error != tt.err {
			t.Errorf("grep(%q, %q).Error = %v, want %v (%q)", tt.pattern, tt.path, res.Error, tt.err, res.Content)
		}
		if tt.want != "" && res.Content != tt.want {
			t.Errorf("grep(%q, %q) = %q, want %q", tt.pattern, tt.path, res.Content, tt.want)
		}
	}
}

func TestGrepSkipsHugeFilesAndReadsBuffers(t *testing.T) {
	root := workspace(t, map[string]string{
		"big.txt": "needle\n" + strings.Repeat("x", grepFileSize),
		"a.go":    "on disk\n",
	})
	bufs := &buffers{docs: map[string]doc{filepath.Join(root, "a.go"): {"the needle in the editor\n", 3}}}
	s := newSet(t, root, Config{Buffers: bufs})
	res := call(t, s, "grep", map[string]any{"pattern": "needle"})
	if want := "a.go:1: the needle in the editor\n\n(not searched, over 2 MB: big.txt)"; res.Content != want {
		t.Errorf("grep(needle) = %q, want %q", res.Content, want)
	}
}

func TestGrepCap(t *testing.T) {
	s := newSet(t, workspace(t, map[string]string{"a.txt": strings.Repeat("hit\n", grepMax+7)}), Config{})
	res := call(t, s, "grep", map[string]any{"pattern": "hit"})
	if !strings.HasSuffix(res.Content, "a.txt:2000: hit\n… and 7 more matches (narrow the pattern or the path)") {
		t.Errorf("grep(%d hits) ends %q, want the cap and a count", grepMax+7, res.Content[max(0, len(res.Content)-100):])
	}
}
