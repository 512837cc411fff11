package lsptest_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/lsp"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

func TestOffsetPosition(t *testing.T) {
	text := "a😀b\r\nxé\rz"
	for _, tc := range []struct {
		enc  string
		p    lsptest.Position
		want int
	}{
		{lsptest.UTF16, lsptest.Position{Line: 0, Character: 3}, 5},
		{lsptest.UTF16, lsptest.Position{Line: 0, Character: 4}, 6},
		{lsptest.UTF8, lsptest.Position{Line: 0, Character: 5}, 5},
		{lsptest.UTF32, lsptest.Position{Line: 0, Character: 2}, 5},
		{lsptest.UTF16, lsptest.Position{Line: 1, Character: 2}, 11},
		{lsptest.UTF8, lsptest.Position{Line: 1, Character: 3}, 11},
		{lsptest.UTF16, lsptest.Position{Line: 2, Character: 1}, 13},
	} {
		got, err := lsptest.Offset(text, tc.p, tc.enc)
		if err != nil || got != tc.want {
			t.Errorf("Offset(%q, %v, %s) = %d, %v, want %d", text, tc.p, tc.enc, got, err, tc.want)
		}
		if back := lsptest.PositionAt(text, tc.want, tc.enc); back != tc.p {
			t.Errorf("PositionAt(%d, %s) = %v, want %v", tc.want, tc.enc, back, tc.p)
		}
	}
	for _, tc := range []struct {
		enc string
		p   lsptest.Position
	}{
		{lsptest.UTF16, lsptest.Position{Line: 0, Character: 2}}, // inside the surrogate pair
		{lsptest.UTF8, lsptest.Position{Line: 0, Character: 3}},  // inside the UTF-8 sequence
		{lsptest.UTF16, lsptest.Position{Line: 0, Character: 5}}, // past the line's end
		{lsptest.UTF16, lsptest.Position{Line: 3, Character: 0}}, // past the last line
	} {
		if got, err := lsptest.Offset(text, tc.p, tc.enc); err == nil {
			t.Errorf("Offset(%q, %v, %s) = %d, want an error", text, tc.p, tc.enc, got)
		}
	}
}

// The harness drives the server through one ask and applies its edit.
func TestEditorAppliesAsk(t *testing.T) {
	e := lsptest.Start(t, lsptest.Config{
		Caps:  lsptest.Full(),
		Files: map[string]string{"main.go": "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"},
		Engine: sim.Config{Script: []sim.Turn{
			{ToolCalls: []sim.ScriptCall{{Name: "edit", Arguments: json.RawMessage(`{"path":"main.go","old_text":"println(\"hi\")","new_text":"println(\"hello\")"}`)}}},
			{Content: "Done."},
		}},
	})
	e.Open("main.go")
	actions := e.CodeActions("main.go", e.FindLine("main.go", `println`))
	from := e.Mark()
	if _, err := e.RunAction(e.PickAction(actions, "fix this code")); err != nil {
		t.Fatal(err)
	}
	e.WaitRunEnd(from)
	if got := e.Text("main.go"); !strings.Contains(got, `println("hello")`) {
		t.Errorf("main.go = %q, want the greeting changed", got)
	}
	t.Log(strings.Join(e.Transcript(), "\n"))
	if err := e.Shutdown(); err != nil {
		t.Errorf("Serve = %v", err)
	}
	_ = lsp.CmdAsk
}
