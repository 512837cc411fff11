package editors

import (
	"strings"
	"testing"
	"time"
)

// TestHelixLateUndo: the run ends ("1 change applied") and only then does
// the user press u. Helix sends the undo in a didChange of its own; the
// server tells the user the change was undone by them, and does not make
// it again.
func TestHelixLateUndo(t *testing.T) {
	r := newRig(t, `[`+greetEdit+`, {"content": "Done."}]`, map[string]string{"greet.go": greetGo})
	m := startHelixArgs(t, r, "-v", "greet.go:5")
	m.codeAction("Reika: fix this code")
	hl := waitHelixLog(t, r, func(hl helixLog) bool { return endLine(hl.messages, "Reika: Done.") != "" }, 15*time.Second)
	if end := endLine(hl.messages, "Reika: Done."); !strings.Contains(end, "1 change applied to greet.go") {
		t.Fatalf("the end line is %q, want 1 change applied to greet.go", end)
	}
	m.waitFor("the edit in the buffer", `"Hello, " + name + "!"`, 5*time.Second)
	m.keys("u")
	m.waitFor("the user's undo", `"hello, " + name`, 5*time.Second)
	hl = waitHelixLog(t, r, func(hl helixLog) bool { return endLine(hl.messages, "was undone by you") != "" }, 10*time.Second)
	t.Logf("told: %q", endLine(hl.messages, "was undone by you"))
	if got := m.save(r, "greet.go"); strings.Join(got, "\n")+"\n" != greetGo {
		t.Errorf("greet.go after the undo:\n%s\nwant\n%s", strings.Join(got, "\n"), greetGo)
	}
}
