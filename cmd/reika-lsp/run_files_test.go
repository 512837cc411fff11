package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/tools"
)

// writeInside never follows a link out of the workspace, writes through
// a link inside it (the link kept), keeps a file's mode, refuses a
// read-only file, and makes a new file's folders.
func TestWriteInside(t *testing.T) {
	base := t.TempDir()
	root, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{root, outside, filepath.Join(root, "real")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, text string, mode os.FileMode) {
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(outside, "secret.txt"), "secret\n", 0o644)
	write(filepath.Join(root, "real", "a.txt"), "a\n", 0o600)
	write(filepath.Join(root, "ro.txt"), "ro\n", 0o444)
	for link, to := range map[string]string{"out": outside, "out.txt": filepath.Join(outside, "secret.txt"), "in.txt": "real/a.txt"} {
		if err := os.Symlink(to, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		rel, err string
	}{
		{"out/secret.txt", "outside the workspace"},
		{"out.txt", "outside the workspace"},
		{"out/new.txt", "outside the workspace"},
		{"ro.txt", "read-only"},
		{"in.txt", ""},
		{"new/dir/b.txt", ""},
	}
	for _, tt := range tests {
		err := writeInside(root, filepath.Join(root, tt.rel), "changed\n")
		if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("writeInside(%s) = %v, want %q", tt.rel, err, tt.err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "secret\n" {
		t.Errorf("the file outside the workspace was changed: %q", b)
	}
	if exists(filepath.Join(outside, "new.txt")) {
		t.Error("a file was made outside the workspace")
	}
	if b, _ := os.ReadFile(filepath.Join(root, "ro.txt")); string(b) != "ro\n" {
		t.Errorf("the read-only file was changed: %q", b)
	}
	if st, err := os.Lstat(filepath.Join(root, "in.txt")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Error("the link inside the workspace was replaced")
	}
	st, err := os.Stat(filepath.Join(root, "real", "a.txt"))
	if b, _ := os.ReadFile(filepath.Join(root, "real", "a.txt")); string(b) != "changed\n" || err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("real/a.txt through the link = %q, mode %v; want changed, 0600", b, st.Mode())
	}
	if b, _ := os.ReadFile(filepath.Join(root, "new", "dir", "b.txt")); string(b) != "changed\n" {
		t.Errorf("new/dir/b.txt = %q, want made", b)
	}
	if left, _ := filepath.Glob(filepath.Join(root, "*", ".*.reika-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// The proposer places a change on the file as it is now: a line the
// proposal did not touch, changed since, is kept.
func TestDiskEditsPlacesOnCurrentText(t *testing.T) {
	root := t.TempDir()
	abs := filepath.Join(root, "f.txt")
	old := "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"
	if err := os.WriteFile(abs, []byte("ONE\ntwo\nthree\nfour\nfive\nsix\nseven\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := tools.Proposal{Path: "f.txt", Abs: abs, Old: old, New: strings.Replace(old, "six", "SIX", 1), Version: -1,
		Hunks: tools.Hunks{{OldStart: strings.Index(old, "six"), OldEnd: strings.Index(old, "six") + 3, Text: "SIX"}}}
	d := newDiskEdits(root)
	out, err := d.propose(context.Background(), p)
	if err != nil || !out.Applied {
		t.Fatalf("propose = %+v, %v; want applied", out, err)
	}
	if b, _ := os.ReadFile(abs); string(b) != "ONE\ntwo\nthree\nfour\nfive\nSIX\nseven\n" {
		t.Errorf("f.txt = %q, want the change placed on the changed text", b)
	}
	if got := d.changed(); len(got) != 1 || got[0] != "f.txt" {
		t.Errorf("changed = %v, want [f.txt]", got)
	}
	prot := tools.Proposal{Path: ".git/config", Abs: filepath.Join(root, ".git", "config"), New: "x", Create: true, Version: -1,
		Hunks: tools.Hunks{{Text: "x"}}, Protected: ".git/** is protected"}
	if out, _ := d.propose(context.Background(), prot); out.Applied || !strings.Contains(out.Reason, "refused: non-interactive run") {
		t.Errorf("propose(.git/config) = %+v, want refused", out)
	}
	if exists(filepath.Join(root, ".git")) {
		t.Error(".git was written")
	}
}

// The run's flags answer the tools' questions: what they do not allow is
// refused naming the flag that would, what a headless run never does is
// refused whatever the flags.
func TestApprovals(t *testing.T) {
	cmd := tools.Question{Kind: tools.AskCommand, Subject: "touch x"}
	net := tools.Question{Kind: tools.AskCommand, Subject: "curl x", Network: true}
	outside := tools.Question{Kind: tools.AskCommand, Subject: "git push", Outside: true}
	fetch := tools.Question{Kind: tools.AskFetch, Subject: "https://example.com/"}
	left := tools.Question{Kind: tools.AskLeft, Subject: ".git/hooks/pre-commit"}
	tests := []struct {
		name                         string
		commands, network, sandboxed bool
		q                            tools.Question
		want                         string // "" when allowed
	}{
		{"command, no flag", false, false, true, cmd, "rerun with --allow-commands"},
		{"command allowed", true, false, true, cmd, ""},
		{"command without a sandbox", true, true, false, cmd, "no sandbox on this machine"},
		{"network command, commands only", true, false, true, net, "--allow-network"},
		{"network command allowed", true, true, true, net, ""},
		{"network command, network only", false, true, true, net, "--allow-commands"},
		{"outside the sandbox", true, true, true, outside, "never runs a command outside the sandbox"},
		{"fetch, no flag", true, false, true, fetch, "rerun with --allow-network"},
		{"fetch allowed", false, true, false, fetch, ""},
		{"a protected path a command left", true, true, true, left, "nobody can be asked"},
		{"an MCP tool, whatever the flags", true, true, true, tools.Question{Kind: tools.AskMCP, Subject: "docs echo"}, "calls no MCP tool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var told string
			a := &approvals{commands: tt.commands, network: tt.network, sandboxed: tt.sandboxed,
				report: func(_ tools.Question, refusal string) { told = refusal }}
			answer := a.ask(context.Background(), tt.q)
			wantAnswer := tools.ThisRun
			if tt.want != "" {
				wantAnswer = tools.Unasked
			}
			if answer != wantAnswer || told != a.refusal(tt.q) {
				t.Errorf("ask = %q (reported %q), want %q", answer, told, wantAnswer)
			}
			if got := a.refusal(tt.q); tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("refusal = %q, want %q", got, tt.want)
			}
			if got := a.refusal(tt.q); got != "" && !strings.HasPrefix(got, "refused: non-interactive run; ") {
				t.Errorf("refusal = %q, want it to say it is a non-interactive run", got)
			}
		})
	}
}
