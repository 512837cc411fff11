package sim

import (
	"strings"
	"testing"
)

// TestReasoningTemplate sends a tool loop whose replies reasoned, then a
// new user message, with the reasoning sent back or not, to each reasoning
// template, and reads from cache_n how much of the slot was reused: the
// whole reply when the template renders the reasoning that came back, the
// previous prompt only when it does not, and less than that when a new
// turn drops the earlier turn's reasoning from the prompt.
func TestReasoningTemplate(t *testing.T) {
	const r1, r2 = "The loader is in config.go: read it first.", "It checks os.IsNotExist and returns ErrMissing."
	sys := system("You are a coding agent.")
	q1, q2 := user("What does parse_config return when the file is missing?"), user("And when it is empty?")
	script := []Turn{
		{Reasoning: r1, ToolCalls: []ScriptCall{{Name: "read", Arguments: []byte(`{"path":"config.go"}`)}}},
		{Reasoning: r2, Content: "It returns ErrMissing."},
		{Content: "ok"},
	}
	// prev is what the previous round's reply was: the whole of it (the
	// prompt and what the slot generated after it), or only the prompt.
	type reuse int
	const (
		whole  reuse = iota // cache_n = previous prompt + completion
		prompt              // cache_n = previous prompt
		broken              // cache_n < previous prompt
	)
	tests := []struct {
		tmpl         ReasoningTemplate
		back         bool
		inTurn, next reuse
	}{
		{AllReasoning, true, whole, whole},
		{TurnReasoning, true, whole, broken},
		{DropReasoning, true, prompt, prompt},
		{AllReasoning, false, prompt, prompt},
		{TurnReasoning, false, prompt, prompt},
		{DropReasoning, false, prompt, prompt},
	}
	for _, tt := range tests {
		name := string(tt.tmpl) + map[bool]string{true: " sent back", false: " not sent back"}[tt.back]
		t.Run(name, func(t *testing.T) {
			_, url := start(t, Config{Script: script, ReasoningTemplate: tt.tmpl})
			tools := toolDefs("read")
			first := chatOK(t, url, with(body(sys, q1), "tools", tools))
			m := first.Choices[0].Message
			if m.ReasoningContent != r1 || len(m.ToolCalls) != 1 {
				t.Fatalf("first reply = %+v, want the scripted reasoning and one call", m)
			}
			a1 := msg{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": m.ToolCalls[0].ID, "type": "function",
				"function": map[string]any{"name": "read", "arguments": m.ToolCalls[0].Function.Arguments}}}}
			if tt.back {
				a1["reasoning_content"] = r1
			}
			t1 := msg{"role": "tool", "tool_call_id": m.ToolCalls[0].ID, "content": "func parse() error { return ErrMissing }"}
			second := chatOK(t, url, with(body(sys, q1, a1, t1), "tools", tools))
			a2 := assistant(second.content())
			if tt.back {
				a2["reasoning_content"] = second.Choices[0].Message.ReasoningContent
			}
			third := chatOK(t, url, with(body(sys, q1, a1, t1, a2, q2), "tools", tools))

			check := func(round string, got int, prev completion, want reuse) {
				t.Helper()
				p, all := prev.Usage.PromptTokens, prev.Usage.PromptTokens+prev.Usage.CompletionTokens
				switch {
				case want == whole && got != all:
					t.Errorf("%s: cache_n = %d, want the previous prompt and reply, %d", round, got, all)
				case want == prompt && got != p:
					t.Errorf("%s: cache_n = %d, want the previous prompt, %d", round, got, p)
				case want == broken && got >= p:
					t.Errorf("%s: cache_n = %d, want less than the previous prompt, %d", round, got, p)
				}
			}
			check("in the turn", second.Timings.CacheN, first, tt.inTurn)
			check("the next turn", third.Timings.CacheN, second, tt.next)
			if tt.next == broken {
				// The earlier turn's reasoning left the prompt where it
				// began: right after the first prompt.
				if got, want := third.Timings.CacheN, first.Usage.PromptTokens; got != want {
					t.Errorf("the next turn: cache_n = %d, want %d, where the first reply began", got, want)
				}
			}
		})
	}
}

// TestReasoningRendered: the rendered prompt (POST /apply-template) shows
// the reasoning the template keeps, as the <think> block the model
// generated, and nothing of the rest.
func TestReasoningRendered(t *testing.T) {
	turn1 := msg{"role": "assistant", "content": "It returns an error.", "reasoning_content": "EARLIER"}
	turn2 := msg{"role": "assistant", "content": "Still an error.", "reasoning": "CURRENT", // vLLM's and Ollama's key
		"tool_calls": []msg{{"id": "c1", "type": "function", "function": msg{"name": "read", "arguments": "{}"}}}}
	// (A last assistant message would be prefilled: its text alone.)
	b := body(user("q1"), turn1, user("q2"), turn2, msg{"role": "tool", "tool_call_id": "c1", "content": "x"})
	tests := []struct {
		tmpl ReasoningTemplate
		want []string
		not  []string
	}{
		{AllReasoning, []string{"<think>EARLIER</think>It returns", "<think>CURRENT</think>Still"}, nil},
		{TurnReasoning, []string{"<think>CURRENT</think>Still"}, []string{"EARLIER"}},
		{DropReasoning, nil, []string{"EARLIER", "CURRENT", "<think>"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.tmpl), func(t *testing.T) {
			_, url := start(t, Config{ReasoningTemplate: tt.tmpl})
			status, data := do(t, "POST", url+"/apply-template", b)
			if status != 200 {
				t.Fatalf("apply-template = %d %s", status, data)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(data), w) {
					t.Errorf("prompt = %s, want %q in it", data, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(string(data), n) {
					t.Errorf("prompt = %s, want no %q in it", data, n)
				}
			}
			_, props := do(t, "GET", url+"/props", nil)
			// llama.cpp reports preserve for a template that reads an
			// earlier reasoning_content at all; the text says which.
			preserve := strings.Contains(string(props), `"supports_preserve_reasoning":true`)
			if preserve != (tt.tmpl != DropReasoning) {
				t.Errorf("/props supports_preserve_reasoning = %v, want %v", preserve, tt.tmpl != DropReasoning)
			}
			if turn := strings.Contains(string(props), "last_query_index"); turn != (tt.tmpl == TurnReasoning) {
				t.Errorf("/props chat_template names last_query_index = %v, want %v", turn, tt.tmpl == TurnReasoning)
			}
		})
	}
	if _, err := New(Config{ReasoningTemplate: "some"}); err == nil {
		t.Error(`New(ReasoningTemplate "some") = nil error, want one`)
	}
}
