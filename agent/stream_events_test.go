package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/agenttest"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/contextwin"
)

// A round's reply and reasoning are reported as the engine streams them
// (Streamed, Reasoned), and each tool call is reported before it runs
// (ToolStarted) with the id its ToolRan carries; a note round streams
// nothing.
func TestRunStreamsTextAndStartsTools(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 8192})
	srv.AppendScript(
		sim.Turn{Content: "Reading it.", Reasoning: "the file first", ToolCalls: []sim.ScriptCall{{Name: "read", Arguments: json.RawMessage(`{"path":"a.go"}`)}}},
		sim.Turn{Content: "It is a short file, and it says hello to the world."},
	)
	s, err := newSession(sessionConfig{Engine: client, Tools: &agenttest.Toolbox{Names: []string{"read"}}, Context: contextwin.Config{Window: 8192}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var c collect
	res, err := s.Run(context.Background(), "what is in a.go?", c.add)
	if err != nil {
		t.Fatal(err)
	}
	var streamed, reasoned strings.Builder
	var started, ran []string
	for _, e := range c.events {
		switch e.Kind {
		case Streamed:
			streamed.WriteString(e.Text)
		case Reasoned:
			reasoned.WriteString(e.Text)
		case ToolStarted:
			if len(ran) != len(started) {
				t.Errorf("ToolStarted %s before the previous call ran", e.CallID)
			}
			if e.Tool != "read" || e.Args != `{"path":"a.go"}` {
				t.Errorf("ToolStarted = %s %s, want read {\"path\":\"a.go\"}", e.Tool, e.Args)
			}
			started = append(started, e.CallID)
		case ToolRan:
			ran = append(ran, e.CallID)
		}
	}
	if want := "Reading it." + res.Answer; streamed.String() != want {
		t.Errorf("streamed %q, want %q", streamed.String(), want)
	}
	if reasoned.String() != "the file first" {
		t.Errorf("reasoned %q, want %q", reasoned.String(), "the file first")
	}
	if len(started) != 1 || len(ran) != 1 || started[0] == "" || started[0] != ran[0] {
		t.Errorf("started %q, ran %q; want one call with one id", started, ran)
	}
}
