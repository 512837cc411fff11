package tools

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/reika-lsp/reika/contextwin"
)

func TestEditSearchReplace(t *testing.T) {
	const file = "package a\n\nfunc A() {\n\tx := 1\n\treturn\n}\n\nfunc B() {\n\tx := 1\n}\n"
	tests := []struct {
		name     string
		old, new string
		want     string // the new text
		err      string // in the error, when set
	}{
		{name: "exact and unique", old: "func A() {", new: "func A2() {",
			want: strings.Replace(file, "func A()", "func A2()", 1)},
		{name: "several lines", old: "func B() {\n\tx := 1\n}", new: "func B() {\n\tx := 2\n}",
			want: strings.Replace(file, "func B() {\n\tx := 1", "func B() {\n\tx := 2", 1)},
		{name: "deletion", old: "\n\nfunc B() {\n\tx := 1\n}", new: "", want: "package a\n\nfunc A() {\n\tx := 1\n\treturn\n}\n"},
		{name: "ambiguous", old: "\tx := 1", new: "\tx := 2", err: "old_text occurs 2 times in a.go; include more of the surrounding lines"},
		{name: "indentation differs", old: "func A() {\n    x := 1\n    return", new: "func A() {\n    x := 3\n    return",
			want: strings.Replace(file, "\tx := 1\n\treturn", "\tx := 3\n\treturn", 1)},
		{name: "indentation differs, deeper", old: "        x := 1\n        return", new: "        y := 1\n        return y",
			want: strings.Replace(file, "\tx := 1\n\treturn", "\ty := 1\n\treturn y", 1)},
		{name: "not found, with the closest line", old: "func C() {", new: "func D() {",
			err: `old_text was not found in a.go, not even ignoring indentation; the closest line to its first line is 3: "func A() {"`},
		{name: "empty old_text", old: "", new: "x", err: "old_text is empty"},
		{name: "no change", old: "func A() {", new: "func A() {", err: "old_text and new_text are the same"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := workspace(t, map[string]string{"a.go": file})
			s := newSet(t, root, Config{})
			res := call(t, s, "edit", map[string]any{"path": "a.go", "old_text": tt.old, "new_text": tt.new})
			if tt.err != "" {
				if !res.Error || !strings.Contains(res.Content, tt.err) || res.Proposal != nil {
					t.Errorf("edit = %q (error %v), want an error containing %q and no proposal", res.Content, res.Error, tt.err)
				}
				return
			}
			if res.Error || res.Proposal == nil {
				t.Fatalf("edit = %q, want a proposal", res.Content)
			}
			if res.Proposal.New != tt.want {
				t.Errorf("edit proposal =\n%s\nwant\n%s", res.Proposal.New, tt.want)
			}
			if got := readFile(t, filepath.Join(root, "a.go")); got != file {
				t.Errorf("a.go on disk = %q after edit, want it untouched", got)
			}
		})
	}
}

func TestEditCRLF(t *testing.T) {
	root := workspace(t, map[string]string{"w.txt": "one\r\ntwo\r\nthree\r\n"})
	s := newSet(t, root, Config{})
	res := call(t, s, "edit", map[string]any{"path": "w.txt", "old_text": "one\ntwo", "new_text": "1\n2"})
	if res.Error || res.Proposal.New != "1\r\n2\r\nthree\r\n" {
		t.Errorf("edit(CRLF) = %q, want line ends kept", res.Content)
	}
}

func TestEditArguments(t *testing.T) {
	root := workspace(t, map[string]string{"a.go": "x\n", "b.go": "x\n"})
	s := newSet(t, root, Config{})
	tests := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"path": "a.go"}, `edit needs "path" and either "old_text" and "new_text"`},
		{map[string]any{"path": "a.go", "old_text": "x"}, `edit needs "new_text"`},
		{map[string]any{"old_text": "x", "new_text": "y"}, `edit needs "path"`},
		{map[string]any{"path": "a.go", "old_text": "x", "new_text": "y", "diff": "@@ @@\n-x\n+y\n"}, "either old_text and new_text, or diff, not both"},
		{map[string]any{"path": "nope.go", "old_text": "x", "new_text": "y"}, "nope.go does not exist; create a new file with write"},
		{map[string]any{"path": "a.go", "diff": "@@ @@\n-x\n+x\n"}, "the change leaves a.go as it is"},
		{map[string]any{"path": "a.go", "diff": "--- a/a.go\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"}, "the diff deletes a.go"},
		{map[string]any{"path": "a.go", "diff": "--- a/b.go\n+++ b/b.go\n@@ -1 +1 @@\n-x\n+y\n"}, "the diff is for b.go, but path is a.go"},
	}
	for _, tt := range tests {
		res := call(t, s, "edit", tt.args)
		if !res.Error || !strings.Contains(res.Content, tt.want) {
			t.Errorf("edit(%v) = %q, want an error containing %q", tt.args, res.Content, tt.want)
		}
	}
	// old_string/new_string, as some models name them, work too; and a
	// diff alone names its file.
	if res := call(t, s, "edit", map[string]any{"path": "a.go", "old_string": "x", "new_string": "y"}); res.Error {
		t.Errorf("edit(old_string/new_string) = %q, want a proposal", res.Content)
	}
	if res := call(t, s, "edit", map[string]any{"diff": "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y\n"}); res.Error || res.Proposal.Path != "a.go" {
		t.Errorf("edit(diff without path) = %q, want a proposal for a.go", res.Content)
	}
	// Placeholder file names and empty fields beside a diff are fine.
	if res := call(t, s, "edit", map[string]any{"path": "a.go", "old_text": "", "new_text": "", "diff": "--- original\n+++ modified\n@@ -1 +1 @@\n-x\n+y\n"}); res.Error {
		t.Errorf("edit(diff with placeholder names) = %q, want a proposal", res.Content)
	}
}

// TestEditProposals follows a change through the proposer: applied,
// rejected, failed, and with no proposer at all.
func TestEditProposals(t *testing.T) {
	const file = "package a\n\nfunc A() {}\n"
	diff := "Sure:\n```diff\n--- a/a.go\n+++ b/a.go\n@@ -30,1 +30,2 @@\n+// A does nothing.\n func A() {}\n```\n"
	wantNew := "package a\n\n// A does nothing.\nfunc A() {}\n"
	wantDiff := "--- a/a.go\n+++ b/a.go\n@@ -1,3 +1,4 @@\n package a\n \n+// A does nothing.\n func A() {}"
	tests := []struct {
		name    string
		rec     *recorder
		content string
		err     bool
		outcome *Outcome
	}{
		{name: "no proposer", content: "Proposed the change to a.go to the user for review; it is not applied yet:\n" + wantDiff},
		{name: "applied", rec: &recorder{out: Outcome{Applied: true}}, content: "Applied the change to a.go:\n" + wantDiff, outcome: &Outcome{Applied: true}},
		{name: "rejected", rec: &recorder{out: Outcome{Reason: "the user said no."}}, err: true,
			content: "The change to a.go was not applied: the user said no. The file is unchanged", outcome: &Outcome{Reason: "the user said no."}},
		{name: "proposer failed", rec: &recorder{err: errors.New("editor went away")}, err: true,
			content: "The change to a.go could not be proposed to the user: editor went away; the file is unchanged"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := workspace(t, map[string]string{"a.go": file})
			cfg := Config{}
			if tt.rec != nil {
				cfg.Proposer = tt.rec.propose
			}
			s := newSet(t, root, cfg)
			res := call(t, s, "edit", map[string]any{"path": "a.go", "diff": diff})
			if res.Content != tt.content || res.Error != tt.err {
				t.Errorf("edit = %q (error %v), want %q (error %v)", res.Content, res.Error, tt.content, tt.err)
			}
			if d := cmp.Diff(tt.outcome, res.Outcome); d != "" {
				t.Errorf("edit outcome (-want +got):\n%s", d)
			}
			if res.Payload != (contextwin.Payload{Kind: contextwin.Diff, Path: "a.go"}) {
				t.Errorf("edit payload = %+v, want a diff of a.go", res.Payload)
			}
			want := &Proposal{Path: "a.go", Abs: filepath.Join(root, "a.go"), Old: file, New: wantNew, Version: -1,
				Hunks: []Hunk{{OldStart: 11, OldEnd: 11, Text: "// A does nothing.\n"}}}
			if d := cmp.Diff(want, res.Proposal, cmpopts.IgnoreFields(Proposal{}, "Diff")); d != "" {
				t.Errorf("edit proposal (-want +got):\n%s", d)
			}
			if tt.rec != nil && (len(tt.rec.calls) != 1 || tt.rec.calls[0].New != wantNew) {
				t.Errorf("proposer calls = %+v, want the one proposal", tt.rec.calls)
			}
			if got := readFile(t, filepath.Join(root, "a.go")); got != file {
				t.Errorf("a.go on disk = %q, want it untouched: the tool never writes", got)
			}
		})
	}
}

// TestEditAgainstOpenBuffer: an edit is computed against the editor's
// text, not the disk's, and carries the buffer's version.
func TestEditAgainstOpenBuffer(t *testing.T) {
	root := workspace(t, map[string]string{"a.go": "func A() {}\n"})
	abs := filepath.Join(root, "a.go")
	bufs := &buffers{docs: map[string]doc{abs: {"// edited in the editor\nfunc A() {}\n", 12}}}
	rec := &recorder{out: Outcome{Applied: true}}
	s := newSet(t, root, Config{Buffers: bufs, Proposer: rec.propose})
	res := call(t, s, "edit", map[string]any{"path": "a.go", "old_text": "// edited in the editor", "new_text": "// A is empty"})
	if res.Error {
		t.Fatalf("edit(buffer text) = %q, want it applied", res.Content)
	}
	p := rec.calls[0]
	if p.Version != 12 || p.Old != "// edited in the editor\nfunc A() {}\n" || p.New != "// A is empty\nfunc A() {}\n" {
		t.Errorf("proposal = version %d, %q → %q; want version 12 and the buffer's text", p.Version, p.Old, p.New)
	}
	// The disk's text is not what an edit matches against.
	if res := call(t, s, "edit", map[string]any{"path": "a.go", "diff": "@@ @@\n-func A() {}\n+func B() {}\n"}); res.Error {
		t.Errorf("edit(diff against the buffer) = %q, want it applied", res.Content)
	}
	bufs.docs[abs] = doc{"something else\n", 13}
	res = call(t, s, "edit", map[string]any{"path": "a.go", "old_text": "func A() {}", "new_text": "func B() {}"})
	if !res.Error || !strings.Contains(res.Content, "open in the editor") {
		t.Errorf("edit(text only on disk) = %q, want a failure that mentions the open buffer", res.Content)
	}
}

// TestEditUnplaceableHunkAppliesNothing: one hunk of two cannot be placed,
// so nothing is proposed.
func TestEditUnplaceableHunkAppliesNothing(t *testing.T) {
	root := workspace(t, map[string]string{"a.go": goFile})
	rec := &recorder{out: Outcome{Applied: true}}
	s := newSet(t, root, Config{Proposer: rec.propose})
	diff := "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-package main\n+package demo\n@@ -6 +6 @@\n-\tfmt.Println(\"bye\")\n+\tfmt.Println(\"ciao\")\n"
	res := call(t, s, "edit", map[string]any{"path": "a.go", "diff": diff})
	if !res.Error || !strings.Contains(res.Content, "hunk 2 of 2") || !strings.Contains(res.Content, "nothing was applied") {
		t.Errorf("edit(bad second hunk) = %q, want an error naming hunk 2", res.Content)
	}
	if len(rec.calls) != 0 || res.Proposal != nil {
		t.Errorf("edit(bad second hunk) proposed %d changes, want none", len(rec.calls))
	}
}

func TestWrite(t *testing.T) {
	root := workspace(t, map[string]string{"old.go": "x\n", "dir/f": ""})
	bufs := &buffers{docs: map[string]doc{filepath.Join(root, "unsaved.go"): {"y\n", 1}}}
	rec := &recorder{out: Outcome{Applied: true}}
	s := newSet(t, root, Config{Buffers: bufs, Proposer: rec.propose})

	res := call(t, s, "write", map[string]any{"path": "pkg/new.go", "content": "package pkg\n\nfunc F() {}\n"})
	if res.Error || res.Content != "Applied creating pkg/new.go (3 lines)" {
		t.Errorf("write(new) = %q, want it applied", res.Content)
	}
	want := Proposal{Path: "pkg/new.go", Abs: filepath.Join(root, "pkg", "new.go"), New: "package pkg\n\nfunc F() {}\n", Version: -1, Create: true,
		Hunks: []Hunk{{Text: "package pkg\n\nfunc F() {}\n"}}}
	if len(rec.calls) != 1 {
		t.Fatalf("write(new) made %d proposals, want 1", len(rec.calls))
	}
	if d := cmp.Diff(want, rec.calls[0], cmpopts.IgnoreFields(Proposal{}, "Diff")); d != "" {
		t.Errorf("write(new) proposal (-want +got):\n%s", d)
	}
	if exists(filepath.Join(root, "pkg", "new.go")) {
		t.Errorf("write(new) wrote the file; the tool never writes")
	}
	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"path": "old.go", "content": "y"}, "write: old.go exists; write only creates new files: change it with edit"},
		{map[string]any{"path": "dir", "content": "y"}, "write: dir is a directory"},
		{map[string]any{"path": "unsaved.go", "content": "y"}, "exists (it is open in the editor)"},
		{map[string]any{"path": "x.go"}, `write needs "content"`},
		{map[string]any{"content": "x"}, `write needs "path"`},
		{map[string]any{"path": "old.go/x", "content": "x"}, "cannot"},
	} {
		res := call(t, s, "write", tt.args)
		if !res.Error || !strings.Contains(res.Content, tt.want) {
			t.Errorf("write(%v) = %q, want an error containing %q", tt.args, res.Content, tt.want)
		}
	}
	// Without a proposer the file stays proposed.
	s = newSet(t, root, Config{})
	if res := call(t, s, "write", map[string]any{"path": "n.txt", "content": ""}); res.Error || res.Content != "Proposed creating n.txt to the user for review; it is not applied yet (0 lines)" {
		t.Errorf("write(no proposer) = %q", res.Content)
	}
}
