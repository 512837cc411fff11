package contextwin

import (
	"strings"
	"testing"
)

func TestDivideAddsUp(t *testing.T) {
	b := NewBudget(16384, 2048)
	tests := []struct {
		name string
		size int
		p    Parts
	}{
		{"nothing", 0, Parts{}},
		{"prefix only", 1500, Parts{Prefix: 6000}},
		{"uneven", 1001, Parts{Prefix: 3, RepoMap: 3, Recap: 3, History: 3, Tools: 3}},
		{"no bytes known", 700, Parts{}},
		{"all parts", 9000, Parts{Prefix: 8000, RepoMap: 3200, Recap: 1200, History: 5000, Tools: 19000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Divide(tt.size, tt.p, b)
			if sum := d.Prefix + d.RepoMap + d.Recap + d.History + d.Tools; sum != tt.size || d.Size != tt.size {
				t.Errorf("Divide(%d, %+v) = %+v: parts add up to %d, want %d", tt.size, tt.p, d, sum, tt.size)
			}
			if d.Size+d.Reserve+d.Free != b.Window {
				t.Errorf("Divide(%d) = %+v: size, reserve and free add up to %d, want the window %d", tt.size, d, d.Size+d.Reserve+d.Free, b.Window)
			}
		})
	}
}

// A session's breakdown adds up to the chip's size, before and after the
// engine reported its count, with the tool results apart from the talk.
func TestSessionBreakdown(t *testing.T) {
	s := NewPlanner(Config{Window: 16384, PrefixChars: 9000})
	s.Append(Message{Role: User, Content: "fix the bug in a.go"})
	s.Append(Message{Role: Assistant, ToolCalls: []ToolCall{{ID: "1", Name: "read", Arguments: `{"path":"a.go"}`}}})
	s.Append(Message{Role: Tool, ToolCallID: "1", Content: strings.Repeat("package a // code\n", 200), Payload: Payload{Kind: Read, Path: "a.go"}})
	s.Plan()
	check := func(when string) {
		t.Helper()
		d := s.Breakdown(3200)
		if sum := d.Prefix + d.RepoMap + d.Recap + d.History + d.Tools; sum != s.Chip().Size {
			t.Errorf("%s: breakdown %+v adds up to %d, want the chip's %d", when, d, sum, s.Chip().Size)
		}
		if d.Tools <= d.History || d.RepoMap == 0 || d.Prefix == 0 {
			t.Errorf("%s: breakdown %+v: want the read's result the largest message part, a map and a prefix", when, d)
		}
	}
	check("estimated")
	s.Observe(Usage{PromptTokens: 4321, CompletionTokens: 20})
	check("reported")
	if got := s.Breakdown(3200).String(); !strings.HasPrefix(got, "prefix ") || !strings.Contains(got, " · free ") {
		t.Errorf("String() = %q, want prefix … free", got)
	}
}
