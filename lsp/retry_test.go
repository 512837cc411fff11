package lsp_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

const retryCalc = "package calc\n\n// Add adds a and b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n"

// startRetry starts a VS Code-like editor (versioned edits, refused when
// the buffer has moved on) on calc.go, whose run makes one change to it.
func startRetry(t *testing.T) *lsptest.Editor {
	t.Helper()
	script, err := sim.ParseScript([]byte(`[
  {"tool_calls": [{"name": "edit", "arguments": {"path": "calc.go", "old_text": "return a - b", "new_text": "return a + b"}}]},
  {"content": "Add adds."}
]`))
	if err != nil {
		t.Fatal(err)
	}
	e := lsptest.Start(t, lsptest.Config{
		Caps:       lsptest.Full(),
		Files:      map[string]string{"calc.go": retryCalc},
		Engine:     sim.Config{Script: script},
		RetryQuiet: 300 * time.Millisecond,
		RetryWait:  8 * time.Second,
	})
	e.Open("calc.go")
	return e
}

// applies counts the applyEdit requests the server sent since mark, and
// those the editor did not apply.
func applies(e *lsptest.Editor, mark int) (sent, refused int) {
	for _, ev := range e.Events()[mark:] {
		if !strings.HasPrefix(ev.Line, "applyEdit ") {
			continue // the request itself; its answer has the line
		}
		sent++
		if strings.Contains(ev.Line, "not applied") {
			refused++
		}
	}
	return sent, refused
}

// The user keeps typing above the agent's target for a while: every edit
// that arrives meanwhile is refused (its version is gone). The change
// waits for the typing to stop, is placed again on the user's text and
// lands, on its line.
func TestRefusedChangeLandsWhenTypingStops(t *testing.T) {
	e := startRetry(t)
	var typing atomic.Bool
	typing.Store(true)
	typed := 0
	typeLine := func(e *lsptest.Editor) error {
		return e.TryEdit("calc.go", "package calc\n", "package calc\n// typed\n")
	}
	// Each edit that arrives while the user types meets a keystroke
	// first, as it does in a real editor under typing.
	var before atomic.Int32
	var answers []lsptest.ApplyAnswer
	for range 20 {
		answers = append(answers, lsptest.ApplyAnswer{Before: func(e *lsptest.Editor) error {
			if !typing.Load() {
				return nil
			}
			before.Add(1)
			return typeLine(e)
		}})
	}
	e.OnApply(answers...)
	mark := e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "Make Add add.", "uri": e.URI("calc.go")}); err != nil {
		t.Fatal(err)
	}
	// Type until the first edit has been refused, and on for a second.
	e.WaitFor("the first applyEdit", mark, func(ev lsptest.Event) bool { return ev.Method == "workspace/applyEdit" })
	for stop := time.Now().Add(time.Second); time.Now().Before(stop); time.Sleep(50 * time.Millisecond) {
		e.Edit("calc.go", "package calc\n", "package calc\n// typed\n")
		typed++
	}
	typing.Store(false)
	end := e.WaitRunEnd(mark)
	if !strings.Contains(end.Line, "1 change applied to calc.go") {
		t.Errorf("the end line is %q, want 1 change applied to calc.go\n%s", end.Line, e.Dump())
	}
	want := "package calc\n" + strings.Repeat("// typed\n", typed+int(before.Load())) + strings.TrimPrefix(strings.Replace(retryCalc, "a - b", "a + b", 1), "package calc\n")
	if got := e.Text("calc.go"); got != want {
		t.Errorf("calc.go is\n%s\nwant\n%s", got, want)
	}
	sent, refused := applies(e, mark)
	if refused == 0 || sent != refused+1 {
		t.Errorf("%d applyEdit sent, %d refused: want some refused while the user typed, then one applied\n%s", sent, refused, e.Dump())
	}
}

// The user's typing changes the very line the agent's change is for: the
// change cannot be placed on it, and it is told as not applied, with the
// reason, once the typing stopped. The user's text is untouched.
func TestRefusedChangeOnTypedLinesIsDropped(t *testing.T) {
	e := startRetry(t)
	e.OnApply(lsptest.ApplyAnswer{Before: func(e *lsptest.Editor) error {
		return e.TryEdit("calc.go", "return a - b", "return a - b - 1")
	}})
	mark := e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "Make Add add.", "uri": e.URI("calc.go")}); err != nil {
		t.Fatal(err)
	}
	end := e.WaitRunEnd(mark)
	if !strings.Contains(end.Line, "1 change to calc.go not applied: you had changed those lines") {
		t.Errorf("the end line is %q, want it to say the change to calc.go was not applied as the user typed on its lines\n%s", end.Line, e.Dump())
	}
	e.WaitLine(mark, `^showMessage warning: Reika's change to calc.go was not applied: hunk 1 of 1 \(line 5 of calc.go\) no longer matches`)
	if got, want := e.Text("calc.go"), strings.Replace(retryCalc, "a - b", "a - b - 1", 1); got != want {
		t.Errorf("calc.go is\n%s\nwant the user's text\n%s", got, want)
	}
	if sent, _ := applies(e, mark); sent != 1 {
		t.Errorf("%d applyEdit sent, want 1 (the change no longer fits)", sent)
	}
}
