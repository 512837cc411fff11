package acp

import (
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reika-lsp/reika/agent/sim"
)

// A reply that gives a task list is sent as the protocol's plan: its
// steps in order, the done ones completed, the first not done in
// progress; the next reply that changes the list sends it again, and an
// answer without one sends none.
func TestPlanFromTheReply(t *testing.T) {
	first := sim.Turn{Content: "Here is the plan:\n- [ ] read main.go\n- [ ] change the greeting\n- [ ] run the tests\n", ToolCalls: []sim.ScriptCall{{Name: "read", Arguments: []byte(`{"path":"main.go"}`)}}}
	second := sim.Turn{Content: "Done:\n- [x] read main.go\n- [x] change the greeting\n- [x] run the tests\nThe greeting is hello now."}
	w := newWorld(t, sim.Config{Script: []sim.Turn{first, second}}, map[string]string{"main.go": mainGo})
	c := &client{}
	cn := w.connect(c)
	id := cn.newSession(t, w.ws)
	if res, err := cn.prompt(t, id, "Change the greeting."); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v; want end_turn", res, err)
	}
	plans := c.matching("plan")
	if len(plans) != 2 {
		t.Fatalf("%d plan updates, want 2: %v", len(plans), plans)
	}
	want := [][]string{{"in_progress", "pending", "pending"}, {"completed", "completed", "completed"}}
	for i, p := range plans {
		entries := p["entries"].([]any)
		if len(entries) != 3 {
			t.Fatalf("plan %d has %d entries, want 3: %v", i+1, len(entries), entries)
		}
		for j, e := range entries {
			m := e.(map[string]any)
			if m["status"] != want[i][j] || m["priority"] != "medium" {
				t.Errorf("plan %d entry %d = %v, want status %s", i+1, j+1, m, want[i][j])
			}
		}
		if got := entries[1].(map[string]any)["content"]; got != "change the greeting" {
			t.Errorf("plan %d's second step = %q", i+1, got)
		}
	}
	if planOf("Just an answer.\n- a list\n- of things\n") != nil || planOf("- [ ] one step only\n") != nil {
		t.Error("a reply with no task list of two steps gave a plan")
	}
}
