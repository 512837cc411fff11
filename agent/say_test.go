package agent

import (
	"context"
	"github.com/reika-lsp/reika/contextwin"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/agenttest"
	"github.com/reika-lsp/reika/agent/sim"
)

// A message the user says while the model writes its answer joins the
// run: the answer is reported, and the run goes on with the message
// instead of ending. Once the run took its last messages, Say refuses, so
// that the caller starts a new run rather than lose the message.
func TestSayJoinsTheRun(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 8192})
	srv.AppendScript(sim.Turn{Content: "first answer"}, sim.Turn{Content: "second answer"})
	s, err := newSession(sessionConfig{Engine: client, Tools: &agenttest.Toolbox{Names: []string{"read"}}, Context: contextwin.Config{Window: 8192}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var c collect
	joined, late := false, true
	res, err := s.Run(context.Background(), "one", func(e Event) {
		c.add(e)
		switch {
		case e.Kind == ChipChanged && e.Round == 1:
			joined = s.Say("and also this")
		case e.Kind == Finished:
			late = s.Say("too late")
		}
	})
	if err != nil || res.Answer != "second answer" || res.Rounds != 2 {
		t.Fatalf("Run = %+v, %v; want the second answer after 2 rounds", res, err)
	}
	if !joined || late {
		t.Errorf("Say during the run = %v, at its end = %v; want true, false", joined, late)
	}
	if got := c.texts(Replied); len(got) != 1 || got[0] != "first answer" {
		t.Errorf("replied events = %q, want the first answer", got)
	}
	reqs := recorded(t, srv, 2)
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "and also this") {
		t.Fatalf("the second request does not carry the user's message")
	}
	if strings.Contains(string(reqs[1].Body), "too late") {
		t.Errorf("a message refused at the run's end reached the engine")
	}
	if !s.Say("between runs") {
		t.Errorf("Say between runs = false, want it kept for the next run")
	}
}
