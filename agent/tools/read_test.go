package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reika-lsp/reika/contextwin"
)

func TestRead(t *testing.T) {
	var long strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	root := workspace(t, map[string]string{
		"a.go":      "package a\n\nfunc A() {}\n",
		"crlf.txt":  "one\r\ntwo\r\n",
		"nonl.txt":  "x\ny",
		"empty.txt": "",
		"long.txt":  long.String(),
		"wide.txt":  strings.Repeat("é", 3000) + "\n",
		"bin.dat":   "PK\x03\x04\x00\x00binary",
		"latin.txt": strings.Repeat("\xe9t\xe9 ", 100),
		"dir/x.go":  "",
	})
	s := newSet(t, root, Config{})
	tests := []struct {
		name    string
		args    map[string]any
		content string // exact, when set
		has     string // substring, when set
		err     bool
		payload contextwin.Payload
	}{
		{name: "whole file", args: map[string]any{"path": "a.go"},
			content: "     1\tpackage a\n     2\t\n     3\tfunc A() {}",
			payload: contextwin.Payload{Kind: contextwin.Read, Path: "a.go", From: 1, To: 3, Total: 3}},
		{name: "offset and limit", args: map[string]any{"path": "a.go", "offset": 2, "limit": 1},
			content: "     2\t\n… 1 line more; read with offset=3",
			payload: contextwin.Payload{Kind: contextwin.Read, Path: "a.go", From: 2, To: 2, Total: 3}},
		{name: "numbers as strings", args: map[string]any{"path": "a.go", "offset": "3", "limit": "5"},
			content: "     3\tfunc A() {}",
			payload: contextwin.Payload{Kind: contextwin.Read, Path: "a.go", From: 3, To: 3, Total: 3}},
		{name: "offset 0 means 1", args: map[string]any{"path": "nonl.txt", "offset": 0},
			content: "     1\tx\n     2\ty",
			payload: contextwin.Payload{Kind: contextwin.Read, Path: "nonl.txt", From: 1, To: 2, Total: 2}},
		{name: "CRLF shown without CR", args: map[string]any{"path": "crlf.txt"},
			content: "     1\tone\n     2\ttwo",
			payload: contextwin.Payload{Kind: contextwin.Read, Path: "crlf.txt", From: 1, To: 2, Total: 2}},
		{name: "empty file", args: map[string]any{"path": "empty.txt"},
			content: "(empty.txt is empty)",
			payload: contextwin.Payload{Kind: contextwin.Read, Path: "empty.txt"}},
		{name: "default limit", args: map[string]any{"path": "long.txt"},
			has:     "  2000\tline 2000\n… 500 lines more; read with offset=2001",
			payload: contextwin.Payload{Kind: contextwin.Read, Path: "long.txt", From: 1, To: 2000, Total: 2500}},
		{name: "limit above the maximum", args: map[string]any{"path": "long.txt", "offset": 2001, "limit": 99999},
			has:     "  2500\tline 2500",
			payload: contextwin.Payload{Kind: contextwin.Read, Path: "long.txt", From: 2001, To: 2500, Total: 2500}},
		{name: "long line clipped", args: map[string]any{"path": "wide.txt"},
			has:     "… [2000 more characters]",
			payload: contextwin.Payload{Kind: contextwin.Read, Path: "wide.txt", From: 1, To: 1, Total: 1}},
		{name: "offset past the end", args: map[string]any{"path": "a.go", "offset": 9}, err: true,
			content: "offset 9 is past the end of a.go, which has 3 lines; read from offset=1 or a smaller offset",
			payload: contextwin.Payload{Kind: contextwin.Read, Path: "a.go", Total: 3}},
		{name: "directory", args: map[string]any{"path": "dir"}, err: true,
			content: `read: dir is a directory; list its files with glob, such as {"pattern":"dir/*"}`},
		{name: "binary", args: map[string]any{"path": "bin.dat"}, err: true,
			content: "read: bin.dat looks like a binary file; read works on text files only"},
		{name: "not UTF-8", args: map[string]any{"path": "latin.txt"}, err: true, has: "binary"},
		{name: "missing", args: map[string]any{"path": "nope.go"}, err: true,
			content: "read: nope.go does not exist; find files with glob"},
		{name: "no path", args: map[string]any{}, err: true, has: `read needs "path"`},
		{name: "bad offset", args: map[string]any{"path": "a.go", "offset": "ten"}, err: true, has: "do not fit"},
		{name: "path of the wrong type", args: map[string]any{"path": 3}, err: true,
			content: `the "path" argument of read must be a string, not a JSON number; for example {"path":"main.go"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, s, "read", tt.args)
			if res.Error != tt.err {
				t.Errorf("read(%v).Error = %v, want %v (content %q)", tt.args, res.Error, tt.err, res.Content)
			}
			if tt.content != "" && res.Content != tt.content {
				t.Errorf("read(%v) = %q, want %q", tt.args, res.Content, tt.content)
			}
			if tt.has != "" && !strings.Contains(res.Content, tt.has) {
				t.Errorf("read(%v) = %q, want it to contain %q", tt.args, res.Content, tt.has)
			}
			if tt.payload != (contextwin.Payload{}) {
				if d := cmp.Diff(tt.payload, res.Payload); d != "" {
					t.Errorf("read(%v) payload (-want +got):\n%s", tt.args, d)
				}
			}
		})
	}
}

func TestReadPrefersOpenBuffer(t *testing.T) {
	root := workspace(t, map[string]string{"a.go": "on disk\n"})
	bufs := &buffers{docs: map[string]doc{filepath.Join(root, "a.go"): {"in the editor\nunsaved\n", 7}}}
	s := newSet(t, root, Config{Buffers: bufs})
	res := call(t, s, "read", map[string]any{"path": "a.go"})
	if want := "     1\tin the editor\n     2\tunsaved"; res.Content != want {
		t.Errorf("read(open a.go) = %q, want %q", res.Content, want)
	}
	// A buffer that exists only in the editor reads too.
	bufs.docs[filepath.Join(root, "new.go")] = doc{"package x\n", 1}
	if res := call(t, s, "read", map[string]any{"path": "new.go"}); res.Error {
		t.Errorf("read(unsaved new.go) = %q, want its text", res.Content)
	}
}

func TestReadHugeFile(t *testing.T) {
	root := workspace(t, nil)
	f, err := os.Create(filepath.Join(root, "huge.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s := newSet(t, root, Config{})
	if res := call(t, s, "read", map[string]any{"path": "huge.log"}); !res.Error || !strings.Contains(res.Content, "over the 20 MB limit") {
		t.Errorf("read(huge.log) = %q, want a refusal naming the limit", res.Content)
	}
}
