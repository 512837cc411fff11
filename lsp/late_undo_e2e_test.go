package lsp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/internal/testslow"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

// An undo that reaches the server in a didChange of its own, after the
// edit was seen landing (VS Code and Helix send every change at once):
// the model hears it with its next request, and the end line says
// "undone by you".
func TestUndoInALaterChange(t *testing.T) {
	const before = "package greet\n\nfunc Hi() string { return \"hi\" }\n"
	script, err := sim.ParseScript([]byte(`[
  {"tool_calls": [{"name": "edit", "arguments": {"path": "greet.go", "old_text": "return \"hi\"", "new_text": "return \"hello\""}}]},
  {"tool_calls": [{"name": "read", "arguments": {"path": "greet.go"}}], "fault": {"latency": "800ms"}},
  {"content": "Done."}
]`))
	if err != nil {
		t.Fatal(err)
	}
	e := lsptest.Start(t, lsptest.Config{
		Caps:   lsptest.Caps{Name: "lsptest-helix-like", Progress: true, ApplyEdit: true, DocumentChanges: true, MessageActions: true},
		Files:  map[string]string{"greet.go": before},
		Engine: sim.Config{Script: script},
	})
	e.Open("greet.go")
	mark := e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "Say hello."}); err != nil {
		t.Fatal(err)
	}
	// The edit's result is at the engine: the user undoes it.
	for deadline := time.Now().Add(testslow.Scale(10 * time.Second)); e.Engine.Arrived() < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the second request never came")
		}
	}
	e.Edit("greet.go", `return "hello"`, `return "hi"`)
	end := e.WaitRunEnd(mark)
	if !strings.Contains(end.Line, "undone by you") {
		t.Errorf("the end line is %q, want it to say undone by you", end.Line)
	}
	e.Engine.Settle()
	reqs := e.Engine.Requests()
	if len(reqs) < 3 || !strings.Contains(string(reqs[2].Body), "the user undid your change to greet.go") {
		t.Errorf("the third request does not tell the model of the undo")
	}
}

// An undo that reaches the server after the run ended (VS Code and Helix:
// the user undoes a moment after the change landed, as the end line comes):
// the end line said "1 change applied", so the user hears a correction,
// and the model hears of the undo with the next request.
func TestUndoAfterTheRunEnded(t *testing.T) {
	const before = "package greet\n\nfunc Hi() string { return \"hi\" }\n"
	script, err := sim.ParseScript([]byte(`[
  {"tool_calls": [{"name": "edit", "arguments": {"path": "greet.go", "old_text": "return \"hi\"", "new_text": "return \"hello\""}}]},
  {"content": "Done."},
  {"content": "Noted."}
]`))
	if err != nil {
		t.Fatal(err)
	}
	e := lsptest.Start(t, lsptest.Config{
		Caps:   lsptest.Caps{Name: "lsptest-helix-like", Progress: true, ApplyEdit: true, DocumentChanges: true, MessageActions: true},
		Files:  map[string]string{"greet.go": before},
		Engine: sim.Config{Script: script},
	})
	e.Open("greet.go")
	mark := e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "Say hello."}); err != nil {
		t.Fatal(err)
	}
	end := e.WaitRunEnd(mark)
	if !strings.Contains(end.Line, "1 change applied to greet.go") {
		t.Fatalf("the end line is %q, want 1 change applied to greet.go", end.Line)
	}
	mark = e.Mark()
	e.Edit("greet.go", `return "hello"`, `return "hi"`)
	e.WaitLine(mark, `^showMessage info: Reika: the change to greet.go was undone by you \(line 3\)`)
	mark = e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "Thanks."}); err != nil {
		t.Fatal(err)
	}
	e.WaitRunEnd(mark)
	e.Engine.Settle()
	reqs := e.Engine.Requests()
	if len(reqs) < 3 || !strings.Contains(string(reqs[2].Body), "the user undid your change to greet.go") {
		t.Errorf("the next run's request does not tell the model of the undo")
	}
	for _, ev := range e.Events()[mark:] {
		if strings.Contains(ev.Line, "undone by you") {
			t.Errorf("the undo is told again in the next run: %q", ev.Line)
		}
	}
}
