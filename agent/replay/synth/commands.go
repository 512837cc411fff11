package synth

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/reika-lsp/reika/contextwin"
)

// notes is a small result that carries the facts due: an issue, a
// scratch file, an environment dump.
func (b *builder) notes(n int) {
	facts := b.due(n, "notes")
	if len(facts) == 0 {
		return
	}
	cmd := b.pick([]string{"cat .reika/notes.md", "gh issue view --comments", "cat ../handoff.txt", "git log -1 --format=%B"})
	var sb strings.Builder
	sb.WriteString(b.pick([]string{"Notes kept while reproducing the bug:\n", "Handoff from the previous session:\n", "From the issue thread:\n"}))
	for _, f := range facts {
		sb.WriteString("FACT " + f.Key + ": " + f.Value + "\n")
	}
	sb.WriteString(b.pick([]string{"(see the thread for the full discussion)\n", "-- end of notes --\n", "Nothing else recorded.\n"}))
	b.call(n, "bash", map[string]any{"command": cmd}, sb.String(), contextwin.Payload{Kind: contextwin.Command, Path: cmd})
}

// notesRound is a round that only reads the notes due.
func (b *builder) notesRound(n int) {
	b.say("%s", b.pick([]string{
		"The issue thread may have details the task does not; checking.",
		"Let me check the notes kept for this task.",
		"Looking at what was recorded about this before.",
	}))
	b.notes(n)
}

// editRound changes two to four lines of a file the session edits.
func (b *builder) editRound(n int) {
	p := b.spec.edits[b.rng.IntN(len(b.spec.edits))]
	lines := fileLines(b.files[p])
	at := b.rng.IntN(len(lines) - 4)
	for range 50 {
		if strings.TrimSpace(lines[at]) != "" && !strings.HasPrefix(lines[at], "//") {
			break
		}
		at = b.rng.IntN(len(lines) - 4)
	}
	k := 2 + b.rng.IntN(3)
	old := lines[at : at+k]
	indent := old[0][:len(old[0])-len(strings.TrimLeft(old[0], "\t"))]
	var repl []string
	switch b.rng.IntN(3) {
	case 0:
		repl = append([]string{indent + "// " + b.pick([]string{
			"Keep the call and its results together.", "The boundary snaps back to the start of the group.",
			"Cached tokens come from the usage details when the engine gives them.", "Never parted: see the regression test.",
			"A second pass would break the O(1) steady state."})}, old...)
	case 1:
		repl = slices.Clone(old)
		repl[len(repl)-1] += " // reviewed"
	default:
		repl = slices.Clone(old)
		repl = append(repl[:1], append([]string{indent + "_ = 0 // placeholder while the fix is in progress"}, repl[1:]...)...)
	}
	b.say("%s %s.", b.pick([]string{"Making the change in", "Adjusting", "A small edit to", "Fixing that spot in", "Updating"}), p)
	b.replaceLines(n, p, lines, at, k, repl)
}

// replaceLines makes round n's edit of file p: the k lines from at of
// lines replaced by repl, the file changed, the call and its diff.
func (b *builder) replaceLines(n int, p string, lines []string, at, k int, repl []string) {
	old := lines[at : at+k]
	oldText, newText := strings.Join(old, "\n"), strings.Join(repl, "\n")
	nl := append(append(slices.Clone(lines[:at]), repl...), lines[at+k:]...)
	b.files[p] = strings.Join(nl, "\n") + "\n"
	var d strings.Builder
	fmt.Fprintf(&d, "--- a/%s\n+++ b/%s\n@@ -%d,%d +%d,%d @@\n", p, p, at+1, k, at+1, len(repl))
	for _, l := range old {
		d.WriteString("-" + l + "\n")
	}
	for _, l := range repl {
		d.WriteString("+" + l + "\n")
	}
	b.call(n, "edit", map[string]any{"path": p, "old_text": oldText, "new_text": newText}, d.String(), contextwin.Payload{Kind: contextwin.Diff, Path: p})
}

// smallTest runs one test: ok, or a short failure.
func (b *builder) smallTest(n int) {
	dirs, tests := b.testsByPackage()
	d := b.spec.focus
	if b.rng.Float64() < 0.2 {
		d = b.pick(dirs)
	}
	if len(tests[d]) == 0 {
		d = dirs[0]
	}
	t := b.pick(tests[d])
	cmd := fmt.Sprintf("go test ./%s/ -run '^%s$' -count=1", d, t)
	var out string
	if b.rng.Float64() < 0.55 {
		out = fmt.Sprintf("ok  \t%s\t0.%03ds\n", b.src.importPath(d), b.rng.IntN(1000))
	} else {
		sub := b.pick(subtestWords)
		out = fmt.Sprintf("--- FAIL: %s (0.%02ds)\n    --- FAIL: %s/%s (0.00s)\n        %s_test.go:%d: got %d messages after the fold, want %d\nFAIL\nFAIL\t%s\t0.%03ds\nFAIL\n",
			t, b.rng.IntN(100), t, sub, path.Base(d), 20+b.rng.IntN(300), b.rng.IntN(40), b.rng.IntN(40), b.src.importPath(d), b.rng.IntN(1000))
	}
	b.call(n, "bash", map[string]any{"command": cmd}, out, contextwin.Payload{Kind: contextwin.Command, Path: cmd})
}

// smallCommand is a command with a few lines of output.
func (b *builder) smallCommand(n int) {
	edited := b.spec.edits
	type cmdOut struct{ cmd, out, say string }
	opts := []cmdOut{
		{"go vet ./...", "", "Vetting everything."},
		{"gofmt -l .", "", "Checking formatting."},
		{"go build ./...", "", "Making sure it builds."},
		{"git status --short", " M " + strings.Join(edited[:1+b.rng.IntN(len(edited))], "\n M ") + "\n", "Checking what has changed so far."},
		{"git diff --stat", fmt.Sprintf(" %s | %d ++++--\n 1 file changed, %d insertions(+), %d deletions(-)\n", b.pick(edited), 2+b.rng.IntN(20), 1+b.rng.IntN(12), b.rng.IntN(8)), "How big is the change now?"},
		{"git log --oneline -5", "ef9ae19 sim: the note lists the facts planted in the conversation, as a careful model would\n1a82ae7 agent: the fixed prefix, and requests built from contextwin's view\ndf2e55f agent/tools: the result, proposal and front-end hook types\ne4add7e contextwin: a package doc that shows the session loop\n75f4789 contextwin: gofmt\n", "Recent history, to see what touched this last."},
		{fmt.Sprintf("wc -l %s", b.pick(edited)), fmt.Sprintf("%d %s\n", 100+b.rng.IntN(600), b.pick(edited)), "How long is the file now?"},
		{"go test ./" + b.spec.focus + "/ -count=1", fmt.Sprintf("ok  \t%s\t%d.%03ds\n", b.src.importPath(b.spec.focus), b.rng.IntN(5), b.rng.IntN(1000)), "Running the package tests."},
	}
	c := opts[b.rng.IntN(len(opts))]
	out := c.out
	if out == "" {
		out = "(no output; exit status 0)\n"
	}
	b.say("%s", c.say)
	b.call(n, "bash", map[string]any{"command": c.cmd}, out, contextwin.Payload{Kind: contextwin.Command, Path: c.cmd})
}

// writeTest writes a new test file of 30–70 lines.
func (b *builder) writeTest(n int) {
	d := b.spec.focus
	p := fmt.Sprintf("%s/regress_%d_test.go", d, n)
	var sb strings.Builder
	fmt.Fprintf(&sb, "package %s\n\nimport \"testing\"\n\n// A turn of many rounds keeps every result beside its call.\nfunc TestRegress%d(t *testing.T) {\n", path.Base(d), n)
	sb.WriteString("\tfor _, tc := range []struct {\n\t\tname   string\n\t\twindow int\n\t\trounds int\n\t}{\n")
	rows := 6 + b.rng.IntN(12)
	for i := range rows {
		fmt.Fprintf(&sb, "\t\t{%q, %d, %d},\n", fmt.Sprintf("%s_%d", b.pick(subtestWords), i), 16000+8000*b.rng.IntN(3), 40+b.rng.IntN(80))
	}
	sb.WriteString("\t} {\n\t\tt.Run(tc.name, func(t *testing.T) {\n\t\t\tgot := orphans(replayTurn(tc.window, tc.rounds))\n\t\t\tif got != 0 {\n\t\t\t\tt.Errorf(\"orphans(%s) = %d, want 0\", tc.name, got)\n\t\t\t}\n\t\t})\n\t}\n}\n")
	content := sb.String()
	b.files[p] = content
	b.say("Writing the regression test.")
	b.call(n, "write", map[string]any{"path": p, "content": content}, fmt.Sprintf("Wrote %d lines (%d bytes) to %s.\n", strings.Count(content, "\n"), len(content), p),
		contextwin.Payload{Kind: contextwin.Other, Path: p})
}

// shortRound runs a command whose output is a line or two and the facts
// due: a version, an environment variable, a CI status.
func (b *builder) shortRound(n int) {
	facts := b.due(n, "short")
	type cmdOut struct{ cmd, out, say string }
	c := []cmdOut{
		{"go version", "go version go1.26.8 linux/amd64\n", "Which toolchain is this?"},
		{"go env GOFLAGS GOEXPERIMENT", "\n\n", "What the environment sets for the go command."},
		{"git log -1 --format='%h %s'", fmt.Sprintf("%07x %s: last change before this task\n", b.rng.Uint32()&0xfffffff, b.spec.focus), "What was merged last."},
		{"cat .ci-status", "status: failing\n", "What CI says now."},
		{"tail -n 2 ../review.txt", "-- review comments --\n", "The last of the review comments."},
	}[b.rng.IntN(5)]
	out := c.out
	for _, f := range facts {
		out += "FACT " + f.Key + ": " + f.Value + "\n"
	}
	b.say("%s", c.say)
	b.call(n, "bash", map[string]any{"command": c.cmd}, out, contextwin.Payload{Kind: contextwin.Command, Path: c.cmd})
}
