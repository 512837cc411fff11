package agent

import (
	"context"
	"strings"
	"testing"
	"time"

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

// The same for the note round: a note refused for its max_tokens alone
// is asked again with the room the engine's figures leave, and the fold
// goes ahead with the note, not without it.
func TestNoteRoomRefusalRetriesWithTheRoomLeft(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 8192, Flavor: sim.VLLM})
	box := scriptReads(srv, 6, 70)
	// The session believes the window is larger than the engine's, so
	// the note round's max_tokens overshoots while its prompt fits.
	s, _ := newSession(sessionConfig{Engine: client, Tools: box, Context: contextwin.Config{Window: 16384}})
	if _, err := s.Run(context.Background(), "read", nil); err != nil {
		t.Fatal(err)
	}
	var c collect
	if _, _, err := s.Compact(context.Background(), c.add); err != nil {
		t.Fatal(err)
	}
	// A request is recorded once its reply has gone out: wait (bounded)
	// for the retry's record.
	var notes []sim.RequestRecord
	for deadline := time.Now().Add(10 * time.Second); len(notes) < 2 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		notes = notes[:0]
		for _, r := range recorded(t, srv, 0) {
			if r.ToolChoice == "none" {
				notes = append(notes, r)
			}
		}
	}
	if len(notes) != 2 || notes[0].Status != 400 || notes[1].Status != 200 {
		t.Fatalf("note requests %+v, want one refused and its retry answered", notes)
	}
	if want := 8192 - notes[1].PromptTokens; notes[1].MaxTokens != want {
		t.Errorf("the retry asked max_tokens %d, want the room left, %d", notes[1].MaxTokens, want)
	}
	if r := s.Recap(); r == nil || !strings.Contains(r.Text, "Progress note") {
		t.Errorf("the fold's recap does not carry the model's note: %+v", r)
	}
}
