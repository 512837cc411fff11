package sim

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseScript(t *testing.T) {
	array := `[
	  {"reasoning": "Look first.", "tool_calls": [{"name": "read", "arguments": {"path": "main.go"}}]},
	  {"content": "Done.", "finish_reason": "stop", "fault": {"latency": "250ms", "cut_after": 2}}
	]`
	jsonl := `{"reasoning": "Look first.", "tool_calls": [{"name": "read", "arguments": {"path": "main.go"}}]}

{"content": "Done.", "finish_reason": "stop", "fault": {"latency": "250ms", "cut_after": 2}}
`
	want := []Turn{
		{Reasoning: "Look first.", ToolCalls: []ScriptCall{{Name: "read", Arguments: json.RawMessage(`{"path": "main.go"}`)}}},
		{Content: "Done.", FinishReason: "stop", Fault: &Fault{Latency: 250 * time.Millisecond, CutAfter: 2}},
	}
	for name, text := range map[string]string{"array": array, "jsonl": jsonl} {
		t.Run(name, func(t *testing.T) {
			got, err := ParseScript([]byte(text))
			if err != nil {
				t.Fatalf("ParseScript = %v", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ParseScript mismatch (-want +got):\n%s", diff)
			}
		})
	}
	bad := []struct{ name, text, want string }{
		{"unknown field", `[{"contents": "x"}]`, "unknown field"},
		{"call without name", `[{"tool_calls": [{"arguments": {}}]}]`, "has no name"},
		{"bad finish", `[{"content": "x", "finish_reason": "done"}]`, "finish_reason"},
		{"bad latency", `[{"fault": {"latency": "soon"}}]`, "latency"},
		{"bad status", `[{"fault": {"status": 200}}]`, "not an HTTP error status"},
		{"bad jsonl line", "{\"content\": \"x\"}\n{oops}\n", "line 2"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParseScript([]byte(tt.text)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseScript(%s) = %v, want an error containing %q", tt.text, err, tt.want)
			}
		})
	}
	t.Run("file", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "script.jsonl")
		os.WriteFile(p, []byte(jsonl), 0o644)
		got, err := LoadScript(p)
		if err != nil || len(got) != 2 {
			t.Errorf("LoadScript = %d turns, %v, want 2 turns", len(got), err)
		}
		if _, err := LoadScript(p + ".missing"); err == nil {
			t.Errorf("LoadScript(missing) = nil error")
		}
	})
}

func TestScriptReplies(t *testing.T) {
	turns, err := ParseScript([]byte(`[
	  {"reasoning": "I should read the file.", "tool_calls": [{"name": "read", "arguments": {"path": "config.go"}}]},
	  {"content": "", "tool_calls": [{"name": "edit", "arguments": "{\"path\": \"config.go\", \"old_text\": \"a\""}]},
	  {"content": "It returns an error.", "finish_reason": "length"}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	s, url := start(t, Config{Script: turns})
	tools := toolDefs("read", "edit")
	conv := []msg{system("sys"), user("What does parse_config return?")}

	// tool_choice none: a note, and the turn with tool calls waits.
	note := chatOK(t, url, with(body(conv...), "tools", tools, "tool_choice", "none"))
	if note.Choices[0].FinishReason != "stop" || len(note.Choices[0].Message.ToolCalls) != 0 || !strings.Contains(note.content(), "Progress note") {
		t.Errorf("tool_choice none: finish %q calls %d content %q, want a note", note.Choices[0].FinishReason, len(note.Choices[0].Message.ToolCalls), note.content())
	}
	if s.ScriptLeft() != 3 {
		t.Errorf("after the note: %d turns left, want 3 (not consumed)", s.ScriptLeft())
	}

	first := chatOK(t, url, with(body(conv...), "tools", tools))
	c := first.Choices[0]
	if c.FinishReason != "tool_calls" || len(c.Message.ToolCalls) != 1 || c.Message.Content != nil {
		t.Fatalf("turn 1: finish %q, %d calls, content %v; want tool_calls, 1 call, null content", c.FinishReason, len(c.Message.ToolCalls), c.Message.Content)
	}
	call := c.Message.ToolCalls[0]
	if call.Function.Name != "read" || call.Function.Arguments != `{"path":"config.go"}` || call.Type != "function" || call.ID == "" {
		t.Errorf("turn 1 call = %+v, want read {\"path\":\"config.go\"}", call)
	}
	if c.Message.ReasoningContent != "I should read the file." {
		t.Errorf("reasoning_content = %q, want the scripted reasoning", c.Message.ReasoningContent)
	}

	second := chatOK(t, url, with(body(conv...), "tools", tools))
	args := second.Choices[0].Message.ToolCalls[0].Function.Arguments
	if args != `{"path": "config.go", "old_text": "a"` || json.Valid([]byte(args)) {
		t.Errorf("turn 2 raw arguments = %q, want the scripted invalid text", args)
	}

	// A checkpoint request (one token, no tools) only primes the cache:
	// it gets a note, and the plain-text turn waits for the next request.
	chatOK(t, url, with(with(with(body(conv...), "tools", tools), "tool_choice", "none"), "max_tokens", 1))
	if s.ScriptLeft() != 1 {
		t.Errorf("after a checkpoint request: %d turns left, want 1 (not consumed)", s.ScriptLeft())
	}
	third := chatOK(t, url, with(body(conv...), "tools", tools))
	if third.content() != "It returns an error." || third.Choices[0].FinishReason != "length" {
		t.Errorf("turn 3 = %q finish %q, want the scripted text and finish length", third.content(), third.Choices[0].FinishReason)
	}
	final := chatOK(t, url, with(body(conv...), "tools", tools))
	if final.Choices[0].FinishReason != "stop" || final.content() == "" {
		t.Errorf("after the script: finish %q content %q, want a final text answer", final.Choices[0].FinishReason, final.content())
	}
	recs := s.Requests()
	sources := []string{}
	for _, r := range recs {
		sources = append(sources, r.Source)
	}
	if diff := cmp.Diff([]string{"note", "script", "script", "note", "script", "final"}, sources); diff != "" {
		t.Errorf("record sources (-want +got):\n%s", diff)
	}
}

// TestStreamToolCalls: tool calls stream OpenAI-style, with arguments in
// several pieces that reassemble to the original.
func TestStreamToolCalls(t *testing.T) {
	args := `{"path": "agent/sim/server.go", "offset": 10, "limit": 40}`
	_, url := start(t, Config{Script: []Turn{{
		Reasoning: "Read the server first, then the template.",
		ToolCalls: []ScriptCall{{Name: "read", Arguments: json.RawMessage(args)}, {Name: "grep", Arguments: json.RawMessage(`{"pattern": "renderPrompt"}`)}},
	}}})
	b := with(body(user("go")), "stream", true, "tools", toolDefs("read", "grep"), "stream_options", map[string]any{"include_usage": true})
	_, data := do(t, "POST", url+"/v1/chat/completions", b)
	type callAcc struct{ id, name, args string }
	var calls []callAcc
	var reasoning strings.Builder
	argChunks, finish := 0, ""
	var usage struct {
		CompletionTokens int `json:"completion_tokens"`
	}
	for _, e := range events(t, bytes.NewReader(data)) {
		if e == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					ReasoningContent string `json:"reasoning_content"`
					ToolCalls        []struct {
						Index    int    `json:"index"`
						ID       string `json:"id"`
						Type     string `json:"type"`
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *json.RawMessage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(e), &c); err != nil {
			t.Fatalf("chunk %s: %v", e, err)
		}
		if c.Usage != nil {
			json.Unmarshal(*c.Usage, &usage)
		}
		for _, ch := range c.Choices {
			reasoning.WriteString(ch.Delta.ReasoningContent)
			for _, tc := range ch.Delta.ToolCalls {
				for len(calls) <= tc.Index {
					calls = append(calls, callAcc{})
				}
				acc := &calls[tc.Index]
				acc.id += tc.ID
				acc.name += tc.Function.Name
				acc.args += tc.Function.Arguments
				if tc.Function.Arguments != "" {
					argChunks++
				}
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
	var compact bytes.Buffer
	json.Compact(&compact, []byte(args))
	want := []callAcc{{calls[0].id, "read", compact.String()}, {calls[1].id, "grep", `{"pattern":"renderPrompt"}`}}
	if diff := cmp.Diff(want, calls, cmp.AllowUnexported(callAcc{})); diff != "" {
		t.Errorf("streamed calls (-want +got):\n%s", diff)
	}
	if calls[0].id == "" || calls[0].id == calls[1].id {
		t.Errorf("call ids %q, %q, want two distinct ids", calls[0].id, calls[1].id)
	}
	if argChunks < 4 {
		t.Errorf("arguments came in %d chunks, want them split over several", argChunks)
	}
	if reasoning.String() != "Read the server first, then the template." || finish != "tool_calls" {
		t.Errorf("reasoning %q finish %q, want the scripted reasoning and tool_calls", reasoning.String(), finish)
	}
	if usage.CompletionTokens == 0 {
		t.Errorf("usage chunk missing or zero completion tokens")
	}
}
