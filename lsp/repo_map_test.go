package lsp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/engine/sim"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

// systemPrompt is the system message of a recorded request.
func systemPrompt(t *testing.T, body []byte) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 || req.Messages[0].Role != "system" {
		t.Fatalf("a request without a system prompt: %v", err)
	}
	return req.Messages[0].Content
}

// The repo map in the prefix follows the code only when a shrink event
// rewrites the request anyway (here a compaction), or in a new session:
// between them, the user's edits do not change a byte of it.
func TestRepoMapChangesOnlyAtShrinkEvents(t *testing.T) {
	var turns []sim.Turn
	for i := 0; i < 12; i++ {
		turns = append(turns, sim.Turn{Content: "Looking.", ToolCalls: []sim.ScriptCall{{Name: "read", Arguments: json.RawMessage(`{"path":"calc.go"}`)}}})
	}
	e := lsptest.Start(t, lsptest.Config{
		Caps:  lsptest.Full(),
		Files: map[string]string{"calc.go": "package calc\n\n// Alpha adds.\nfunc Alpha(a, b int) int { return a + b }\n" + strings.Repeat("\n// filler line for the reads\n", 200)},
		Engine: sim.Config{Ctx: 32768, Script: append(turns,
			sim.Turn{Content: "first answer"}, sim.Turn{Content: "second answer"}, sim.Turn{Content: "third answer"})},
	})
	e.Open("calc.go")
	ask := func(what string) {
		from := e.Mark()
		if _, err := e.Exec("reika.ask", map[string]any{"instruction": what}); err != nil {
			t.Fatal(err)
		}
		e.WaitRunEnd(from)
	}
	ask("Read calc.go a few times.")
	reqs := e.Engine.Requests()
	first := systemPrompt(t, reqs[0].Body)
	if !strings.Contains(first, "func Alpha(a, b int) int") {
		t.Fatalf("the first request's map lacks Alpha:\n%s", first)
	}
	for i, r := range reqs {
		if got := systemPrompt(t, r.Body); got != first {
			t.Fatalf("request %d's system prompt differs from the first within one run", i+1)
		}
	}

	// The user adds a function: the next ask's prefix does not move.
	e.Edit("calc.go", "// Alpha adds.", "// Beta subtracts.\nfunc Beta(a, b int) int { return a - b }\n\n// Alpha adds.")
	ask("And now?")
	reqs = e.Engine.Requests()
	if got := systemPrompt(t, reqs[len(reqs)-1].Body); got != first {
		t.Fatalf("the map moved without a shrink event")
	}

	// A compaction folds: the next request carries the new map.
	if _, err := e.Exec("reika.compact"); err != nil {
		t.Fatal(err)
	}
	ask("Once more.")
	reqs = e.Engine.Requests()
	last := systemPrompt(t, reqs[len(reqs)-1].Body)
	if last == first || !strings.Contains(last, "func Beta(a, b int) int") {
		t.Errorf("after the fold the map did not catch up with the code (Beta missing):\n%s", last)
	}
	t.Logf("%d requests", len(reqs))
}
