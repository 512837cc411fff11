package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reika-lsp/reika/agent/agenttest"
	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/contextwin"
)

// The note round's request, as the engine receives it, carries the
// newest tool result whole (it fits the note's share), not only its
// summary: the note is written from it.
func TestNoteRequestCarriesTheNewestResult(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 24000})
	var turns []sim.Turn
	for i := 0; i < 60; i++ {
		turns = append(turns, readTurn(fmt.Sprintf("f%d.go", i)))
	}
	srv.AppendScript(append(turns, sim.Turn{Content: "done"})...)
	var mu sync.Mutex
	var results []string
	box := &agenttest.Toolbox{Names: []string{"read"}, Answer: func(c engine.ToolCall) tools.Result {
		mu.Lock()
		defer mu.Unlock()
		n := len(results)
		body := strings.Repeat(fmt.Sprintf("\tvalue = compute(value, %d)\n", n), 80)
		results = append(results, body)
		return tools.Result{Content: body, Payload: contextwin.Payload{Kind: contextwin.Read, Path: fmt.Sprintf("f%d.go", n), From: 1, To: 80, Total: 80}}
	}}
	s, _ := newSession(sessionConfig{Engine: client, Tools: box, Context: contextwin.Config{Window: 24000}})
	if _, err := s.Run(context.Background(), "read them all", nil); err != nil {
		t.Fatal(err)
	}
	q, _ := json.Marshal(contextwin.NoteInstruction[:60])
	checked := 0
	for _, r := range recorded(t, srv, s.Stats().Requests) {
		body := string(r.Body)
		if !strings.Contains(body, strings.Trim(string(q), `"`)) {
			continue
		}
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(r.Body, &req); err != nil {
			t.Fatal(err)
		}
		last := ""
		for _, m := range req.Messages {
			if m.Role == "tool" {
				last = m.Content
			}
		}
		mu.Lock()
		whole := slices.Contains(results, last)
		mu.Unlock()
		if !whole {
			t.Errorf("the note request carries its newest result as %q…, want it whole", last[:min(len(last), 120)])
		}
		checked++
	}
	if checked < 2 {
		t.Fatalf("%d note rounds happened, want at least 2: the test tests too little", checked)
	}
}
