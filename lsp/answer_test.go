package lsp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

// The answer is seen whole where the user looks: in the message when it
// is short; in the client's own view (VS Code's panel) with no document on
// top; in a document where the client opens one (Helix also for a line
// its status bar would cut); else in a message of its own lines.
func TestAnswerWhole(t *testing.T) {
	long := "The greeting is built in Greet.\n\n- It joins \"hello, \" and the name.\n- Nothing else calls it.\n\nChange the literal to capitalize it."
	line := "The greeting is built in Greet, which joins the literal with the name; nothing else in the package calls it, so changing the literal is enough."
	for _, tt := range []struct {
		name   string
		caps   lsptest.Caps
		answer string
		doc    bool   // the answer opens as a document
		whole  string // a message holds it whole, lines kept
	}{
		{"no showDocument, several lines", lsptest.Caps{Name: "Neovim", Progress: true, ApplyEdit: true}, long, false, "Reika's answer:\n" + long},
		{"showDocument, several lines", lsptest.Caps{Name: "Neovim", Progress: true, ApplyEdit: true, ShowDocument: true}, long, true, ""},
		{"VS Code's panel", func() lsptest.Caps { c := lsptest.Full(); c.Answers = true; return c }(), long, false, ""},
		{"Helix, a line its status bar cuts", lsptest.Caps{Name: "helix", Progress: true, ApplyEdit: true, DocumentChanges: true, ShowDocument: true}, line, true, ""},
		{"another client, the same line", lsptest.Caps{Name: "Neovim", Progress: true, ApplyEdit: true, ShowDocument: true}, line, false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			turns, _ := json.Marshal([]map[string]string{{"content": tt.answer}})
			script, err := sim.ParseScript(turns)
			if err != nil {
				t.Fatal(err)
			}
			e := lsptest.Start(t, lsptest.Config{Caps: tt.caps, Files: map[string]string{"greet.go": "package greet\n"}, Engine: sim.Config{Script: script}})
			mark := e.Mark()
			if _, err := e.Exec("reika.ask", map[string]any{"instruction": "Explain the greeting."}); err != nil {
				t.Fatal(err)
			}
			end := e.WaitRunEnd(mark)
			switch {
			case tt.doc:
				e.WaitFor("the answer document", end.Seq, func(ev lsptest.Event) bool { return ev.Method == "window/showDocument" })
			case tt.whole != "":
				e.WaitLine(end.Seq, "^showMessage info: Reika's answer:")
			default:
				// The server has sent all it will once it stopped.
				if err := e.Shutdown(); err != nil {
					t.Fatal(err)
				}
			}
			var messages []string
			opened := false
			for _, ev := range e.Events()[mark:] {
				opened = opened || ev.Method == "window/showDocument"
				if ev.Method == "window/showMessage" {
					var p struct{ Message string }
					json.Unmarshal(ev.Params, &p)
					messages = append(messages, p.Message)
				}
			}
			if opened != tt.doc {
				t.Errorf("a document opened: %v, want %v\n%s", opened, tt.doc, e.Dump())
			}
			if tt.whole != "" && !strings.Contains(strings.Join(messages, "\x00"), tt.whole) {
				t.Errorf("no message holds the answer whole, lines kept; messages %q", messages)
			}
			if !tt.doc && tt.whole == "" && !strings.Contains(end.Line, "Reika") {
				t.Errorf("the end line is %q", end.Line)
			}
			if tt.name == "another client, the same line" && !strings.Contains(end.Line, line) {
				t.Errorf("the end line %q does not hold the answer", end.Line)
			}
		})
	}
}
