package agent

import (
	"context"
	"testing"

	"github.com/reika-lsp/reika/agent/agenttest"
	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/contextwin"
)

// Stats.Decoded is what the engine generated, by its own count, over
// every request it answered: the warm-up's, the tool round's, the
// answer's.
func TestStatsDecoded(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 8192})
	srv.AppendScript(readTurn("a.go"), sim.Turn{Content: "Done: a.go declares package a and nothing else, so there is nothing to change."})
	box := &agenttest.Toolbox{Names: []string{"read"}, Answer: func(engine.ToolCall) tools.Result {
		return tools.Result{Content: "     1\tpackage a\n", Payload: contextwin.Payload{Kind: contextwin.Read, Path: "a.go", From: 1, To: 1, Total: 1}}
	}}
	s, err := newSession(sessionConfig{Engine: client, Tools: box, Context: contextwin.Config{Window: 8192}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Warmup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if res, err := s.Run(context.Background(), "look at a.go", nil); err != nil || res.End != Answered {
		t.Fatalf("Run = %+v, %v; want an answer", res, err)
	}
	st := s.Stats()
	want := 0
	for _, r := range recorded(t, srv, st.Requests) {
		want += r.CompletionTokens
	}
	if st.Decoded != want || want == 0 {
		t.Errorf("Stats().Decoded = %d over %d requests, want the engine's %d generated tokens", st.Decoded, st.Requests, want)
	}
}
