package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/agenttest"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/contextwin"
)

// A plan-mode run leads the user's message with the plan preface; the
// system prompt is byte for byte a normal run's.
func TestPlanPreface(t *testing.T) {
	sent := map[tools.Mode][]json.RawMessage{}
	for _, mode := range []tools.Mode{tools.Normal, tools.Plan} {
		srv, client := simEngine(t, sim.Config{Ctx: 8192})
		srv.AppendScript(sim.Turn{Content: "1. Change a.go."})
		s, err := newSession(sessionConfig{Engine: client, Tools: &agenttest.Toolbox{Names: []string{"read"}}, TranscriptDir: t.TempDir(), Context: contextwin.Config{Window: 8192}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Run(tools.WithRun(context.Background(), mode), "Rename Foo.", nil); err != nil {
			t.Fatal(err)
		}
		var body struct{ Messages []json.RawMessage }
		if err := json.Unmarshal(recorded(t, srv, 1)[0].Body, &body); err != nil {
			t.Fatal(err)
		}
		sent[mode] = body.Messages
	}
	normal, plan := sent[tools.Normal], sent[tools.Plan]
	if len(normal) != len(plan) || string(normal[0]) != string(plan[0]) {
		t.Errorf("the plan run's system prompt differs from a normal run's:\n%s\n%s", normal[0], plan[0])
	}
	var last struct{ Role, Content string }
	json.Unmarshal(plan[len(plan)-1], &last)
	if last.Role != "user" || !strings.HasPrefix(last.Content, planPreface) || !strings.HasSuffix(last.Content, "Rename Foo.") {
		t.Errorf("plan run's user message = %+v, want the preface then the instruction", last)
	}
	json.Unmarshal(normal[len(normal)-1], &last)
	if strings.Contains(last.Content, "Plan mode") {
		t.Errorf("normal run's user message = %q, has the plan preface", last.Content)
	}
}
