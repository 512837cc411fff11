package contextwin

import (
	"fmt"
	"testing"
)

// grown returns a session of n messages (a task, then rounds of a call and
// a 32-byte result) that has been planned and answered, so that the next
// plan is a steady-state append.
func grown(n, window int) *Planner {
	s := NewPlanner(Config{Window: window, PrefixChars: 8000})
	s.Append(Message{Role: User, Content: "Go through the code base."})
	res := text(32, 1)
	for i := 1; i < n; i += 2 {
		id := fmt.Sprint("c", i)
		s.Append(Message{Role: Assistant, ToolCalls: []ToolCall{{ID: id, Name: "read", Arguments: `{"path":"a.go"}`}}})
		s.Append(Message{Role: Tool, ToolCallID: id, Content: res, Payload: Payload{Kind: Read, Path: "a.go"}})
	}
	p := s.Plan()
	s.Observe(Usage{PromptTokens: p.Estimate, CompletionTokens: 50, FinishReason: "tool_calls"})
	return s
}

// BenchmarkPlan is one round at steady state: append a call and its
// result, plan, take the engine's answer. 100k messages are about 1M
// tokens.
func BenchmarkPlan(b *testing.B) {
	for _, n := range []int{1000, 100_000} {
		b.Run(fmt.Sprintf("%dmsgs", n), func(b *testing.B) {
			s := grown(n, 1_000_000_000) // never fills, however long the benchmark runs
			res := text(32, 2)
			i := 0
			for b.Loop() {
				i++
				id := fmt.Sprint("b", i)
				s.Append(Message{Role: Assistant, ToolCalls: []ToolCall{{ID: id, Name: "read", Arguments: `{"path":"b.go"}`}}})
				s.Append(Message{Role: Tool, ToolCallID: id, Content: res, Payload: Payload{Kind: Read, Path: "b.go"}})
				p := s.Plan()
				if p.Event != Append {
					b.Fatalf("event %s at steady state", p.Event)
				}
				s.Observe(Usage{PromptTokens: p.Estimate, CompletionTokens: 50, FinishReason: "tool_calls"})
			}
		})
	}
}

// BenchmarkShrink is one shrink event over a full window: a round of
// large reads pushes a grown session over its shed point, and the plan
// sheds and folds.
func BenchmarkShrink(b *testing.B) {
	for _, n := range []int{1000, 100_000} {
		b.Run(fmt.Sprintf("%dmsgs", n), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				s := grown(n, 1_000_000_000)
				s.cfg.Window = s.estimate() * 13 / 10 // the session sits at about 85% of the shed point
				for i := 0; i < 10; i++ {
					id := fmt.Sprint("big", i)
					s.Append(Message{Role: Assistant, ToolCalls: []ToolCall{{ID: id, Name: "read", Arguments: `{}`}}})
					s.Append(Message{Role: Tool, ToolCallID: id, Content: body(s.cfg.Window / 10), Payload: Payload{Kind: Read, Path: "big.go"}})
				}
				b.StartTimer()
				p := s.Plan()
				if p.Event == Note {
					s.SetNote("")
					p = s.Plan()
				}
				if p.Event != Fold && p.Event != Shed {
					b.Fatalf("no shrink: %s, estimate %d, budget %+v", p.Event, p.Estimate, s.Budget())
				}
			}
		})
	}
}
