//go:build unix

package tools

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestProtection(t *testing.T) {
	for _, tt := range []struct {
		path string
		want string // a part of the reason; "" for not protected
	}{
		{".git/config", ".git/** is protected"},
		{".git/hooks/pre-push", ".git/** is protected"},
		{".git", ".git/** is protected"},
		{"vendor/lib/.git/config", ".git/** is protected"},
		{".GIT/config", ".git/** is protected"},
		{".vscode/settings.json", ".vscode/** is protected"},
		{".vscode/tasks.json", ".vscode/** is protected"},
		{".idea/workspace.xml", ".idea/**"},
		{".helix/languages.toml", ".helix/**"},
		{".zed/settings.json", ".zed/**"},
		{".nvim.lua", ".nvim.lua is protected"},
		{".exrc", ".exrc is protected"},
		{"src/.dir-locals.el", ".dir-locals.el is protected"},
		{".envrc", ".envrc is protected"},
		{"sub/.envrc", ".envrc is protected"},
		{".env", ".env is protected"},
		{".env.local", ".env.local is protected"},
		{".github/workflows/ci.yml", ".github/workflows/** is protected"},
		{".gitlab-ci.yml", ".gitlab-ci.yml is protected"},
		{".husky/pre-commit", ".husky/**"},
		{".pre-commit-config.yaml", ".pre-commit-config.yaml is protected"},
		{".devcontainer/devcontainer.json", ".devcontainer/**"},
		{"AGENTS.md", "agents.md is protected"},
		{"pkg/AGENTS.md", "agents.md is protected"},
		{"CLAUDE.md", "claude.md is protected"},
		{".cursorrules", ".cursorrules is protected"},
		{".github/copilot-instructions.md", "copilot-instructions.md"},
		{".cargo/config.toml", ".cargo/**"},
		{".npmrc", ".npmrc is protected"},
		{"main.go", ""},
		{"Makefile", ""},
		{"README.md", ""},
		{".github/ISSUE_TEMPLATE.md", ""},
		{".gitignore", ""},
		{"docs/environment.md", ""},
		{"git/config", ""},
	} {
		got := Protection(tt.path)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("Protection(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
	for name, want := range map[string]bool{".git": true, ".github": true, ".envrc": true, "AGENTS.md": true, "src": false, "go.mod": false, "Makefile": false} {
		if got := ProtectedTopLevel(name); got != want {
			t.Errorf("ProtectedTopLevel(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestProposalsSayProtected: a change to a protected path reaches the
// proposer marked, with its diff; an ordinary one unmarked.
func TestProposalsSayProtected(t *testing.T) {
	root := workspace(t, map[string]string{".git/config": "[core]\n", "main.go": "package main\n"})
	var got []Proposal
	s := newSet(t, root, Config{Proposer: func(_ context.Context, p Proposal) (Outcome, error) {
		got = append(got, p)
		return Outcome{Reason: "not applied: protected"}, nil
	}})
	call(t, s, "edit", map[string]any{"path": ".git/config", "old_text": "[core]\n", "new_text": "[core]\n\tfsmonitor = ./x\n"})
	call(t, s, "edit", map[string]any{"path": "main.go", "old_text": "package main\n", "new_text": "package main // x\n"})
	if len(got) != 2 {
		t.Fatalf("proposals = %d, want 2", len(got))
	}
	if !strings.Contains(got[0].Protected, ".git/** is protected") || !strings.Contains(got[0].Diff, "+\tfsmonitor = ./x") {
		t.Errorf(".git/config proposal: Protected %q, Diff %q; want it marked with its diff", got[0].Protected, got[0].Diff)
	}
	if got[1].Protected != "" {
		t.Errorf("main.go proposal: Protected %q, want none", got[1].Protected)
	}
}

// TestProtectedThroughALink: a link to a protected file is the file.
func TestProtectedThroughALink(t *testing.T) {
	root := workspace(t, map[string]string{".git/config": "[core]\n", "docs/x": ""})
	if err := os.Symlink("../.git/config", filepath.Join(root, "docs", "cfg")); err != nil {
		t.Fatal(err)
	}
	var got []Proposal
	s := newSet(t, root, Config{Proposer: func(_ context.Context, p Proposal) (Outcome, error) {
		got = append(got, p)
		return Outcome{Reason: "no"}, nil
	}})
	call(t, s, "edit", map[string]any{"path": "docs/cfg", "old_text": "[core]\n", "new_text": "[core]\n\tfsmonitor = x\n"})
	if len(got) != 1 || !strings.Contains(got[0].Protected, ".git/** is protected") {
		t.Errorf("edit through a link to .git/config: proposals %+v, want it marked protected", got)
	}
}

func TestWriteRefusesBadNames(t *testing.T) {
	root := workspace(t, nil)
	s := newSet(t, root, Config{Proposer: func(context.Context, Proposal) (Outcome, error) {
		t.Error("a bad name was proposed")
		return Outcome{}, nil
	}})
	for _, name := range []string{"-rf", "sub/-n", "a\nb.go", "tab\there"} {
		res := call(t, s, "write", map[string]any{"path": name, "content": "x"})
		if !res.Error || !strings.Contains(res.Content, "was not created") {
			t.Errorf("write(%q) = %q, want it refused", name, res.Content)
		}
	}
}

func TestEditRefusesModeChanges(t *testing.T) {
	root := workspace(t, map[string]string{"link": "x\n"})
	s := newSet(t, root, Config{})
	for _, diff := range []string{
		"diff --git a/link b/link\nold mode 100644\nnew mode 120000\n--- a/link\n+++ b/link\n@@ -1 +1 @@\n-x\n+/root/.ssh/id_rsa\n",
		"diff --git a/link b/link\nold mode 100644\nnew mode 100755\n--- a/link\n+++ b/link\n@@ -1 +1 @@\n-x\n+#!/bin/sh\n",
	} {
		res := call(t, s, "edit", map[string]any{"path": "link", "diff": diff})
		if !res.Error || !strings.Contains(res.Content, "changes a file's mode") {
			t.Errorf("edit(mode diff) = %q, want it refused", res.Content)
		}
	}
}

// questions records the questions asked and answers each with the next
// answer of a script (the last one repeats).
type questions struct {
	mu      sync.Mutex
	asked   []Question
	answers []Answer
}

func (q *questions) ask(_ context.Context, x Question) Answer {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.asked = append(q.asked, x)
	a := q.answers[0]
	if len(q.answers) > 1 {
		q.answers = q.answers[1:]
	}
	return a
}

func (q *questions) subjects() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	var s []string
	for _, x := range q.asked {
		s = append(s, string(x.Kind)+" "+x.Subject)
	}
	return s
}

func TestFetchAsksOncePerHost(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/away" {
			http.Redirect(w, r, "http://other.example.com/page", http.StatusFound)
			return
		}
		w.Write([]byte("page " + r.URL.RawQuery))
	}))
	defer srv.Close()
	q := &questions{answers: []Answer{ThisRun, Deny}}
	s := publicSet(t, srv, Config{Ask: q.ask})
	for _, u := range []string{"http://docs.example.com/a?x=1", "http://docs.example.com/b"} {
		if res := call(t, s, "fetch_url", map[string]any{"url": u}); res.Error {
			t.Errorf("fetch_url(%s) = %q, want it fetched", u, res.Content)
		}
	}
	res := call(t, s, "fetch_url", map[string]any{"url": "http://docs.example.com/away"})
	if !res.Error || !strings.Contains(res.Content, "declined") {
		t.Errorf("fetch_url(redirect to a new host, declined) = %q, want it refused", res.Content)
	}
	want := []string{"fetch http://docs.example.com/a?x=1", "fetch http://other.example.com/page"}
	if d := cmp.Diff(want, q.subjects()); d != "" {
		t.Errorf("questions (-want +got):\n%s", d)
	}
	// Once holds for that fetch only; nobody to ask refuses.
	q = &questions{answers: []Answer{Once}}
	s = publicSet(t, srv, Config{Ask: q.ask})
	call(t, s, "fetch_url", map[string]any{"url": "http://docs.example.com/a"})
	call(t, s, "fetch_url", map[string]any{"url": "http://docs.example.com/a"})
	if n := len(q.subjects()); n != 2 {
		t.Errorf("after Once, questions = %d, want 2 (one per fetch)", n)
	}
	s = publicSet(t, srv, Config{Ask: func(context.Context, Question) Answer { return Unasked }})
	if res := call(t, s, "fetch_url", map[string]any{"url": "http://docs.example.com/a?secret=1"}); !res.Error || !strings.Contains(res.Content, "cannot be asked") {
		t.Errorf("fetch_url(nobody to ask) = %q, want it refused", res.Content)
	}
}

// fakeSandbox starts commands as they are and records how.
type fakeSandbox struct {
	mu      sync.Mutex
	started []string
}

func (f *fakeSandbox) Start(cmd *exec.Cmd, network bool) error {
	f.mu.Lock()
	f.started = append(f.started, strings.Join(cmd.Args[2:], " ")+map[bool]string{true: " +net"}[network])
	f.mu.Unlock()
	return cmd.Start()
}
func (f *fakeSandbox) Env() []string { return []string{"PATH=/usr/bin:/bin"} }
func (f *fakeSandbox) Explain(out string) string {
	if strings.Contains(out, "Permission denied") {
		return "[sandbox note]"
	}
	return ""
}

func TestBashAnswers(t *testing.T) {
	root := workspace(t, map[string]string{"f.txt": "x"})
	var remembered []string
	q := &questions{answers: []Answer{ThisRun, Once, Always, Once}}
	s := newSet(t, root, Config{Ask: q.ask, Remember: func(e string) error {
		remembered = append(remembered, e)
		return nil
	}})
	ctx := WithRun(context.Background(), Normal)
	run := func(ctx context.Context, command string) Result {
		t.Helper()
		return runTool(t, s, ctx, "bash", map[string]any{"command": command})
	}
	run(ctx, "touch a")
	run(ctx, "touch a") // allowed for this run
	run(WithRun(context.Background(), Normal), "touch a")
	run(ctx, "wc -l f.txt") // always
	run(WithRun(context.Background(), Normal), "wc -l f.txt")
	want := []string{"command touch a", "command touch a", "command wc -l f.txt"}
	if d := cmp.Diff(want, q.subjects()); d != "" {
		t.Errorf("questions (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"wc -l f.txt"}, remembered); d != "" {
		t.Errorf("remembered (-want +got):\n%s", d)
	}
	// "always" is offered for a plain command only.
	last := q.asked[len(q.asked)-1]
	if d := cmp.Diff([]Answer{Once, ThisRun, Always}, last.Answers); d != "" {
		t.Errorf("answers offered for a plain command (-want +got):\n%s", d)
	}
	run(ctx, "echo a | tee b")
	if a := q.asked[len(q.asked)-1].Answers; len(a) != 2 {
		t.Errorf("answers offered for a pipeline = %v, want once and this run", a)
	}
}

// TestBashWithoutSandboxAsksAfterAWrite: with no sandbox, an allowlisted
// command asks once the run has changed a file (it could run it); with a
// sandbox it runs contained, unasked.
func TestBashWithoutSandboxAsksAfterAWrite(t *testing.T) {
	for _, sandboxed := range []bool{false, true} {
		root := workspace(t, map[string]string{"main.go": "package main\n"})
		q := &questions{answers: []Answer{Deny}}
		cfg := Config{Ask: q.ask, BashAllow: []string{"cat"}, Proposer: func(context.Context, Proposal) (Outcome, error) {
			return Outcome{Applied: true}, nil
		}}
		sb := &fakeSandbox{}
		if sandboxed {
			cfg.Sandbox = sb
		}
		s := newSet(t, root, cfg)
		ctx := WithRun(context.Background(), Normal)
		if res := runTool(t, s, ctx, "bash", map[string]any{"command": "cat main.go"}); res.Error {
			t.Fatalf("sandbox %v: cat before a write = %q", sandboxed, res.Content)
		}
		runTool(t, s, ctx, "edit", map[string]any{"path": "main.go", "old_text": "package main\n", "new_text": "package main // x\n"})
		res := runTool(t, s, ctx, "bash", map[string]any{"command": "cat main.go"})
		if sandboxed {
			if res.Error || len(q.asked) != 0 || len(sb.started) != 2 {
				t.Errorf("sandboxed: cat after a write = %q, asked %v, started %v; want it run contained, unasked", res.Content, q.subjects(), sb.started)
			}
			continue
		}
		if !res.Error || len(q.asked) != 1 || !strings.Contains(q.asked[0].Why, "no sandbox") {
			t.Errorf("no sandbox: cat after a write = %q, asked %v; want it asked and declined", res.Content, q.subjects())
		}
	}
}

func TestBashNetworkAndOutsideAsk(t *testing.T) {
	root := workspace(t, nil)
	q := &questions{answers: []Answer{Once}}
	sb := &fakeSandbox{}
	s := newSet(t, root, Config{Ask: q.ask, BashAllow: []string{"true"}, Sandbox: sb})
	ctx := WithRun(context.Background(), Normal)
	runTool(t, s, ctx, "bash", map[string]any{"command": "true"})
	runTool(t, s, ctx, "bash", map[string]any{"command": "true", "network": true})
	runTool(t, s, ctx, "bash", map[string]any{"command": "true", "outside_sandbox": true})
	if len(q.asked) != 2 || !strings.Contains(q.asked[0].Why, "network") || !strings.Contains(q.asked[1].Why, "outside the sandbox") {
		t.Errorf("questions = %+v, want network then outside", q.asked)
	}
	if d := cmp.Diff([]string{"true", "true +net"}, sb.started); d != "" {
		t.Errorf("started in the sandbox (-want +got):\n%s", d)
	}
	for _, a := range q.asked {
		for _, x := range a.Answers {
			if x == Always {
				t.Errorf("%q offered always", a.Why)
			}
		}
	}
}

func TestBashExplainsSandboxRefusals(t *testing.T) {
	root := workspace(t, nil)
	s := newSet(t, root, Config{Ask: yes, Sandbox: &fakeSandbox{}})
	res := runTool(t, s, context.Background(), "bash", map[string]any{"command": "echo 'x: Permission denied' >&2; exit 1"})
	if !strings.HasSuffix(res.Content, "[exit status 1]\n[sandbox note]") {
		t.Errorf("bash(denied) = %q, want the sandbox's note after the status", res.Content)
	}
}

func TestAskAllMode(t *testing.T) {
	root := workspace(t, nil)
	q := &questions{answers: []Answer{Deny}}
	s := newSet(t, root, Config{Ask: q.ask, BashAllow: []string{"true"}, Sandbox: &fakeSandbox{}})
	res := runTool(t, s, WithRun(context.Background(), AskAll), "bash", map[string]any{"command": "true"})
	if !res.Error || len(q.asked) != 1 {
		t.Errorf("ask mode: allowlisted true = %q, asked %d; want it asked", res.Content, len(q.asked))
	}
}
