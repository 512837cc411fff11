package lsp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

// Emacs 30's eglot wrote the change a line too high, over typing it had
// not sent; before the server could move it, the user changed the line it
// was written on. It stays where it was written: the end line says it was
// applied and which line to check, as the text is when the run ends, and
// nothing says "not applied".
func TestAstrayChangeLeftWhenItsLineChanged(t *testing.T) {
	script, err := sim.ParseScript([]byte(`[
  {"tool_calls": [{"name": "edit", "arguments": {"path": "calc.go", "old_text": "return a - b", "new_text": "return a + b"}}]},
  {"content": "Add adds."}
]`))
	if err != nil {
		t.Fatal(err)
	}
	caps := lsptest.Full()
	caps.Eglot, caps.Name, caps.Version, caps.Progress = "1.17", "Eglot", "1.17.30", false
	e := lsptest.Start(t, lsptest.Config{
		Caps:       caps,
		Files:      map[string]string{"calc.go": retryCalc},
		Engine:     sim.Config{Script: script},
		RetryQuiet: time.Second,
		RetryWait:  8 * time.Second,
	})
	e.Open("calc.go")
	e.OnApply(lsptest.ApplyAnswer{Before: func(e *lsptest.Editor) error {
		return e.TypePending("calc.go", "package calc\n", "package calc\n// typed\n")
	}})
	mark := e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "Make Add add.", "uri": e.URI("calc.go")}); err != nil {
		t.Fatal(err)
	}
	e.WaitLine(mark, `^showMessage warning: Reika's change to calc.go was written on line 5 while you were typing`)
	// A line typed above, then the written line changed.
	e.Edit("calc.go", "package calc\n", "package calc\n// more\n")
	e.Edit("calc.go", "func Add(a+ b int) int {", "func Add(a+ b int) (int) {")
	end := e.WaitRunEnd(mark)
	if !strings.Contains(end.Line, "1 change applied to calc.go, but you were typing: check calc.go line 6") {
		t.Errorf("the end line is %q, want 1 change applied, check calc.go line 6\n%s", end.Line, e.Dump())
	}
	e.WaitLine(mark, `^showMessage warning: Reika's change to calc.go stays where it was written while you were typing \(you changed its lines since\): check line 6`)
	for _, ev := range e.Events()[mark:] {
		if strings.Contains(ev.Line, "not applied") {
			t.Errorf("%q: the change was written", ev.Line)
		}
	}
	if sent, _ := applies(e, mark); sent != 1 {
		t.Errorf("%d applyEdit sent, want 1 (the change could not be moved)\n%s", sent, e.Dump())
	}
}

// The text of a change eglot 1.17 wrote over typing it had not sent
// arrives after the server stopped waiting for it (the user kept typing):
// the run said it unconfirmed, and the warning that follows names the
// line it was written on, as the text is then.
func TestLateAstrayNamesItsLine(t *testing.T) {
	script, err := sim.ParseScript([]byte(`[
  {"tool_calls": [{"name": "edit", "arguments": {"path": "calc.go", "old_text": "return a - b", "new_text": "return a + b"}}]},
  {"content": "Add adds."}
]`))
	if err != nil {
		t.Fatal(err)
	}
	caps := lsptest.Full()
	caps.Eglot, caps.Name, caps.Version, caps.Progress = "1.17", "Eglot", "1.17.30", false
	e := lsptest.Start(t, lsptest.Config{
		Caps:          caps,
		Files:         map[string]string{"calc.go": retryCalc},
		Engine:        sim.Config{Script: script},
		VerifyTimeout: 50 * time.Millisecond,
	})
	e.Open("calc.go")
	// Two lines typed above as the edit arrives, one more right after.
	e.OnApply(lsptest.ApplyAnswer{
		Before: func(e *lsptest.Editor) error {
			return e.TypePending("calc.go", "package calc\n", "package calc\n// one\n// two\n")
		},
		After: func(e *lsptest.Editor) error {
			return e.TypePending("calc.go", "package calc\n", "package calc\n// three\n")
		},
	})
	mark := e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "Make Add add.", "uri": e.URI("calc.go")}); err != nil {
		t.Fatal(err)
	}
	if end := e.WaitRunEnd(mark); !strings.Contains(end.Line, "unconfirmed") {
		t.Fatalf("the end line is %q, want the change unconfirmed (the server waits 50 ms for its text)\n%s", end.Line, e.Dump())
	}
	// Written on line 5 of the text with two lines typed above, two lines
	// too high; line 6 once the third came.
	e.WaitLine(mark, `^showMessage warning: Reika's earlier change to calc.go did not land as planned \(you were typing there\): check line 6,`)
	if got, want := e.Text("calc.go"), "package calc\n// three\n// one\n// two\n\n// Add add+ a and b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n"; got != want {
		t.Errorf("calc.go is\n%s\nwant\n%s", got, want)
	}
}

// The user typed above the target as the change arrived, and again as
// the move arrived: eglot wrote both astray. The move is moved in turn,
// and the change ends where it belongs, the user's three lines intact.
func TestAstrayMoveMovedAgain(t *testing.T) {
	script, err := sim.ParseScript([]byte(`[
  {"tool_calls": [{"name": "edit", "arguments": {"path": "calc.go", "old_text": "return a - b", "new_text": "return a + b"}}]},
  {"content": "Add adds."}
]`))
	if err != nil {
		t.Fatal(err)
	}
	caps := lsptest.Full()
	caps.Eglot, caps.Name, caps.Version, caps.Progress = "1.17", "Eglot", "1.17.30", false
	e := lsptest.Start(t, lsptest.Config{
		Caps:       caps,
		Files:      map[string]string{"calc.go": retryCalc},
		Engine:     sim.Config{Script: script},
		RetryQuiet: 300 * time.Millisecond,
		RetryWait:  8 * time.Second,
	})
	e.Open("calc.go")
	typeLine := func(line string) lsptest.ApplyAnswer {
		return lsptest.ApplyAnswer{Before: func(e *lsptest.Editor) error {
			return e.TypePending("calc.go", "package calc\n", "package calc\n"+line+"\n")
		}}
	}
	e.OnApply(typeLine("// one"), typeLine("// two\n// three"))
	mark := e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "Make Add add.", "uri": e.URI("calc.go")}); err != nil {
		t.Fatal(err)
	}
	end := e.WaitRunEnd(mark)
	if !strings.Contains(end.Line, "1 change applied to calc.go ·") {
		t.Errorf("the end line is %q, want 1 change applied to calc.go, nothing to check\n%s", end.Line, e.Dump())
	}
	want := "package calc\n// two\n// three\n// one\n" + strings.TrimPrefix(strings.Replace(retryCalc, "a - b", "a + b", 1), "package calc\n")
	if got := e.Text("calc.go"); got != want {
		t.Errorf("calc.go is\n%s\nwant\n%s\n%s", got, want, e.Dump())
	}
	if sent, _ := applies(e, mark); sent != 3 {
		t.Errorf("%d applyEdit sent, want 3 (the change, its move written astray too, the move of that)\n%s", sent, e.Dump())
	}
}
