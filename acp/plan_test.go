package acp

import (
	"encoding/json"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reika-lsp/reika/agent"
	"github.com/reika-lsp/reika/agent/sim"
)

// A reply's task list is sent as the protocol's plan, ticked from what
// Reika saw: a step whose file was edited is completed; a step the model
// marks done with nothing seen stays pending, its content saying it is
// claimed; the first step left is in progress. An answer without a list
// sends none.
func TestPlanFromWhatRan(t *testing.T) {
	first := sim.Turn{Content: "Here is the plan:\n- [ ] change the greeting in main.go\n- [ ] explain why\n- [ ] tell the user\n",
		ToolCalls: []sim.ScriptCall{{Name: "edit", Arguments: json.RawMessage(`{"path":"main.go","old_text":"println(\"hi\")","new_text":"println(\"hello\")"}`)}}}
	second := sim.Turn{Content: "Done:\n- [x] change the greeting in main.go\n- [x] explain why\n- [ ] tell the user\nThe greeting is hello now."}
	w := newWorld(t, sim.Config{Script: []sim.Turn{first, second}}, map[string]string{"main.go": mainGo})
	c := &client{}
	cn := w.connect(c)
	id := cn.newSession(t, w.ws)
	if res, err := cn.prompt(t, id, "Change the greeting."); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v; want end_turn", res, err)
	}
	plans := c.matching("plan")
	want := [][]string{
		{"in_progress", "pending", "pending"},   // stated
		{"completed", "in_progress", "pending"}, // the edit applied
		{"completed", "pending", "in_progress"}, // step 2 claimed
	}
	if len(plans) != len(want) {
		t.Fatalf("%d plan updates, want %d: %v", len(plans), len(want), plans)
	}
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
	}
	last := plans[2]["entries"].([]any)
	if got := last[1].(map[string]any)["content"]; got != "explain why (claimed, not seen)" {
		t.Errorf("the claimed step reads %q", got)
	}
	if got := last[0].(map[string]any)["content"]; got != "change the greeting in main.go" {
		t.Errorf("the done step reads %q", got)
	}
	if planOf(nil) != nil {
		t.Error("no task list gave a plan")
	}
	if p := planOf([]agent.Task{{Text: "a", Status: agent.TaskClaimed}, {Text: "b"}}); p[0].Status != sdk.PlanEntryStatusPending || p[1].Status != sdk.PlanEntryStatusInProgress {
		t.Errorf("planOf(claimed, pending) = %+v", p)
	}
}
