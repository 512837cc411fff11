package lsp

import (
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent/tools"
)

// TestMisplacedIn: the text eglot sends after it wrote an edit over typing
// it had not sent is read back into the user's text and the line the edit
// went to, only when it is exactly that.
func TestMisplacedIn(t *testing.T) {
	const old = "package calc\n\n// Add adds a and b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n"
	p := tools.Proposal{Path: "calc.go", Abs: "/ws/calc.go", Old: old, New: strings.Replace(old, "a - b", "a + b", 1)}
	plan, err := PlanEdit(p, Current{Text: old, Version: 3, Open: true, Exists: true})
	if err != nil {
		t.Fatal(err)
	}
	// The edit as sent: line 4 (0-based), "-" at 10.
	edits := []sentEdit{{rng: protocol.Range{Start: protocol.Position{Line: 4, Character: 10}, End: protocol.Position{Line: 4, Character: 11}}, text: "+"}}
	write := func(user string, after string) string {
		t.Helper()
		got, ok := applyAt(user, edits, UTF16)
		if !ok {
			t.Fatalf("applyAt(%q) failed", user)
		}
		return strings.Replace(got, "package calc\n", "package calc\n"+after, 1)
	}
	typed := "package calc\n// one\n// two\n" + strings.TrimPrefix(old, "package calc\n")
	deleted := strings.Replace(old, "package calc\n\n", "package calc\n", 1)
	for _, c := range []struct {
		name, now, user string
		line            int
		ok              bool
	}{
		{"two lines typed above before it came", write(typed, ""), typed, 5, true},
		{"one before, one after", write("package calc\n// one\n"+strings.TrimPrefix(old, "package calc\n"), "// two\n"),
			"package calc\n// two\n// one\n" + strings.TrimPrefix(old, "package calc\n"), 6, true},
		{"a line deleted above", write(deleted, ""), deleted, 5, true},
		{"where planned", plan.Result(), "", 0, false},
		{"the user's own lines", typed, "", 0, false},
		{"typed over its lines too", strings.Replace(write(typed, ""), "a and b.", "x and y.", 1), "", 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			user, line, ok := misplacedIn(plan, edits, c.now, UTF16)
			if ok != c.ok || user != c.user || line != c.line {
				t.Errorf("misplacedIn(%q) = %q, %d, %v; want %q, %d, %v", c.now, user, line, ok, c.user, c.line, c.ok)
			}
		})
	}
}
