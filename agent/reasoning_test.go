package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/reika-lsp/reika/agent/agenttest"
	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/contextwin"
)

// thinkingTurns is one turn of a model that thinks between tool calls:
// n reads, each after its own reasoning, then an answer after more.
func thinkingTurns(turn, n int) []sim.Turn {
	var out []sim.Turn
	for i := range n {
		out = append(out, sim.Turn{
			Reasoning: fmt.Sprintf("Turn %d, step %d: the loader may fail on a missing file, so read f%d.go next.", turn, i, i),
			ToolCalls: []sim.ScriptCall{{Name: "read", Arguments: []byte(fmt.Sprintf(`{"path":"f%d.go"}`, i))}},
		})
	}
	return append(out, sim.Turn{
		Reasoning: fmt.Sprintf("Turn %d: every file returns ErrMissing; answer.", turn),
		Content:   fmt.Sprintf("Answer %d: it returns ErrMissing.", turn),
	})
}

// reasoningSession runs two turns of a thinking model on the simulator
// with the reasoning template given, handing reasoning back or not, and
// returns what the engine recorded and the requests the session sent.
func reasoningSession(t *testing.T, tmpl sim.ReasoningTemplate, back bool) ([]sim.RequestRecord, []engine.Request) {
	t.Helper()
	srv, client := simEngine(t, sim.Config{Ctx: 16384, ReasoningTemplate: tmpl})
	srv.AppendScript(append(thinkingTurns(1, 3), thinkingTurns(2, 2)...)...)
	box := &agenttest.Toolbox{Names: []string{"read"}, Answer: func(c engine.ToolCall) tools.Result {
		return tools.Result{Content: "     1\tpackage f\n     2\n     3\tfunc Load() error { return ErrMissing }\n",
			Payload: contextwin.Payload{Kind: contextwin.Read, Path: "f.go", From: 1, To: 3, Total: 3}}
	}}
	rec := &recorder{inner: client}
	s, err := newSession(sessionConfig{Engine: rec, Tools: box, ReasoningBack: back, Context: contextwin.Config{Window: 16384}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, ask := range []string{"What does the loader return for a missing file?", "And for an empty one?"} {
		res, err := s.Run(context.Background(), ask, rec.report)
		if err != nil || res.Answer != fmt.Sprintf("Answer %d: it returns ErrMissing.", i+1) {
			t.Fatalf("Run %d = %+v, %v", i+1, res, err)
		}
	}
	for i, shrunk := range rec.shrunk {
		if shrunk {
			t.Fatalf("request %d followed a shrink event; the session is meant to stay below the shed point", i)
		}
	}
	return recorded(t, srv, len(rec.reqs)), rec.reqs
}

// TestReasoningBackReusesTheCache: with a template that renders the
// reasoning sent back, every request of a two-turn session reuses the
// whole of the one before — its prompt and the reply generated after it —
// to the token; without the reasoning sent back, only the prompt: each
// reply is prefilled again from its reasoning on.
func TestReasoningBackReusesTheCache(t *testing.T) {
	for _, back := range []bool{true, false} {
		t.Run(fmt.Sprintf("back=%v", back), func(t *testing.T) {
			reqs, _ := reasoningSession(t, sim.AllReasoning, back)
			if len(reqs) != 7 {
				t.Fatalf("%d requests, want 7 (4 rounds, then 3)", len(reqs))
			}
			reused, lost := 0, 0
			for i := 1; i < len(reqs); i++ {
				prev := reqs[i-1]
				whole := prev.PromptTokens + prev.CompletionTokens
				switch got := reqs[i].CacheN; {
				case back && got != whole:
					t.Errorf("request %d: cache_n = %d, want the previous prompt and its reply, %d + %d", i, got, prev.PromptTokens, prev.CompletionTokens)
				case !back && got != prev.PromptTokens:
					t.Errorf("request %d: cache_n = %d, want the previous prompt, %d", i, got, prev.PromptTokens)
				}
				reused += reqs[i].CacheN
				lost += whole - reqs[i].CacheN
			}
			if !back && lost == 0 {
				t.Errorf("without reasoning sent back no token was prefilled again; want each reply's")
			}
			t.Logf("reasoning back %v: %d tokens reused, %d of the previous requests and replies prefilled again", back, reused, lost)
		})
	}
}

// TestReasoningBackTurnTemplate: with a template that renders only the
// current turn's reasoning, the reasoning sent back keeps the tool loop
// reused to the token, and the new turn's first request restarts where
// the template dropped the earlier turn's reasoning: the one cost no
// request can avoid.
func TestReasoningBackTurnTemplate(t *testing.T) {
	reqs, _ := reasoningSession(t, sim.TurnReasoning, true)
	for i := 1; i < len(reqs); i++ {
		prev := reqs[i-1]
		got := reqs[i].CacheN
		if i == 4 { // the second turn's first request
			if got >= prev.PromptTokens {
				t.Errorf("request %d, a new turn: cache_n = %d, want less than the previous prompt %d (the template dropped the turn's reasoning)", i, got, prev.PromptTokens)
			}
			continue
		}
		if want := prev.PromptTokens + prev.CompletionTokens; got != want {
			t.Errorf("request %d: cache_n = %d, want %d", i, got, want)
		}
	}
}

// TestReasoningBackCarriesTheTurn: the requests carry reasoning_content
// on the assistant messages of the turn that made them, each message as
// it was first sent in every later request; off, on none.
func TestReasoningBackCarriesTheTurn(t *testing.T) {
	for _, back := range []bool{true, false} {
		_, sent := reasoningSession(t, sim.DropReasoning, back)
		seen := map[string]string{} // an assistant message's first bytes as sent → its reasoning then
		for i, req := range sent {
			for _, m := range req.Messages {
				if m.Role != "assistant" {
					continue
				}
				key := m.Content + fmt.Sprint(m.ToolCalls)
				if was, ok := seen[key]; ok && was != m.Reasoning {
					t.Errorf("back=%v request %d: a message sent with reasoning %q carries %q now", back, i, was, m.Reasoning)
				}
				seen[key] = m.Reasoning
				if back && m.Reasoning == "" {
					t.Errorf("back=%v request %d: assistant message %q carries no reasoning", back, i, key)
				}
				if !back && m.Reasoning != "" {
					t.Errorf("back=%v request %d: assistant message %q carries reasoning %q, want none", back, i, key, m.Reasoning)
				}
			}
			body, _ := json.Marshal(req.Messages)
			if !back && bytes.Contains(body, []byte("Turn 1, step")) {
				t.Errorf("back=false request %d: the reasoning reached the request", i)
			}
		}
		if len(seen) != 6 {
			t.Errorf("back=%v: %d distinct assistant messages sent, want 6", back, len(seen))
		}
	}
}

// TestReasoningOnlyReply: a reply with reasoning and nothing else, and an
// empty reply, are answers: the run ends, and the next turn sends the
// message back (with its reasoning, and an empty content) and goes on.
func TestReasoningOnlyReply(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 8192, ReasoningTemplate: sim.AllReasoning})
	srv.AppendScript(sim.Turn{Reasoning: "Nothing needs doing."}, sim.Turn{}, sim.Turn{Content: "ok"})
	box := &agenttest.Toolbox{Names: []string{"read"}}
	s, err := newSession(sessionConfig{Engine: client, Tools: box, ReasoningBack: true, Context: contextwin.Config{Window: 8192}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, want := range []string{"", "", "ok"} {
		res, err := s.Run(context.Background(), fmt.Sprintf("ask %d", i), nil)
		if err != nil || res.End != Answered || res.Answer != want || res.Rounds != 1 {
			t.Fatalf("Run %d = %+v, %v; want answered %q in one round", i, res, err, want)
		}
	}
	reqs := recorded(t, srv, 3)
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if !bytes.Contains(reqs[1].Body, []byte(`{"role":"assistant","content":"","reasoning_content":"Nothing needs doing."}`)) {
		t.Errorf("second request = %s, want the reasoning-only reply sent back with an empty content", reqs[1].Body)
	}
	if got, want := reqs[1].CacheN, reqs[0].PromptTokens+reqs[0].CompletionTokens; got != want {
		t.Errorf("second request: cache_n = %d, want the first prompt and its reply, %d", got, want)
	}
}

// TestReasoningBackResume: a resumed session sends the reasoning its
// messages carried before, so its first request is an append of the last
// one the engine saw, reused to the token.
func TestReasoningBackResume(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 8192, ReasoningTemplate: sim.AllReasoning})
	srv.AppendScript(append(thinkingTurns(1, 1), thinkingTurns(2, 0)...)...)
	box := &agenttest.Toolbox{Names: []string{"read"}}
	cfg := sessionConfig{Engine: client, Tools: box, ReasoningBack: true, TranscriptDir: t.TempDir(), Context: contextwin.Config{Window: 8192}}
	s, err := newSession(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), "one", nil); err != nil {
		t.Fatal(err)
	}
	cfg.Resume, cfg.TranscriptDir = s.TranscriptPath(), ""
	s.Close()

	s2, err := newSession(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if res, err := s2.Run(context.Background(), "two", nil); err != nil || res.Answer != "Answer 2: it returns ErrMissing." {
		t.Fatalf("Run after resume = %+v, %v", res, err)
	}
	reqs := recorded(t, srv, 3)
	last, prev := reqs[len(reqs)-1], reqs[len(reqs)-2]
	if !bytes.Contains(last.Body, []byte(`"reasoning_content":"Turn 1, step 0`)) {
		t.Errorf("the resumed session's request = %s, want the first turn's reasoning as it was sent", last.Body)
	}
	if got, want := last.CacheN, prev.PromptTokens+prev.CompletionTokens; got != want {
		t.Errorf("the resumed session's request: cache_n = %d, want the last prompt and its reply, %d", got, want)
	}
}

// A user message the planner marks as riding is sent at the end of the
// tool result before it, not as a message of its own; one that does not
// ride is its own message.
func TestRequestRides(t *testing.T) {
	p := NewPrefix("sys", nil)
	msgs := []contextwin.Message{
		{Role: contextwin.User, Content: "task"},
		{Role: contextwin.Assistant, Content: "next", Reasoning: "think", ToolCalls: []contextwin.ToolCall{{ID: "c1", Name: "read", Arguments: "{}"}}},
		{Role: contextwin.Tool, ToolCallID: "c1", Content: "result"},
		{Role: contextwin.User, Content: "also the tests", Rides: true},
	}
	req := p.Request(msgs, 100, "")
	if n := len(req.Messages); n != 4 {
		t.Fatalf("%d messages, want 4 (system, task, reply, result with what was said)", n)
	}
	last := req.Messages[3]
	if last.Role != "tool" || last.Content != contextwin.RiddenText("result", "also the tests") || last.ToolCallID != "c1" {
		t.Errorf("last message = %+v, want the result with what the user said after it", last)
	}
	msgs[3].Rides = false
	if req := p.Request(msgs, 100, ""); len(req.Messages) != 5 || req.Messages[4].Role != "user" {
		t.Errorf("a user message that does not ride was not sent as its own")
	}
}
