package agent

import (
	"context"
	"testing"

	"github.com/reika-lsp/reika/agent/agenttest"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/contextwin"
)

// An engine that refuses a request whose prompt fits but whose
// max_tokens does not (vLLM) gets the same request again with the room
// its figures leave: no emergency fold, nothing shed.
func TestReplyRoomRefusalRetriesWithTheRoomLeft(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 4096, Flavor: sim.VLLM})
	srv.AppendScript(sim.Turn{Content: "done"})
	// The session believes the window is larger than the engine's, so
	// its max_tokens overshoots while the prompt fits.
	s, _ := newSession(sessionConfig{Engine: client, Tools: &agenttest.Toolbox{Names: []string{"read"}}, Context: contextwin.Config{Window: 8192}})
	res, err := s.Run(context.Background(), "say done", nil)
	if err != nil || res.End != Answered {
		t.Fatalf("Run = %+v, %v; want an answer", res, err)
	}
	if st := s.Stats(); st.Overflows != 0 {
		t.Errorf("overflows = %d, want 0: the prompt fitted", st.Overflows)
	}
	recs := recorded(t, srv, 2)
	if len(recs) < 2 {
		t.Fatalf("%d requests, want the refused one and its retry", len(recs))
	}
	first, retry := recs[len(recs)-2], recs[len(recs)-1]
	if first.Status != 400 || retry.Status != 200 {
		t.Fatalf("statuses %d then %d, want 400 then 200", first.Status, retry.Status)
	}
	if want := 4096 - retry.PromptTokens; retry.MaxTokens != want {
		t.Errorf("the retry asked max_tokens %d, want the room left, %d", retry.MaxTokens, want)
	}
}
