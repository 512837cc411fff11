package sim

import (
	"strings"
	"testing"
)

// A tool the policy does not know is still called, with its required
// arguments filled from the schema: this is what `reika-lsp check` asks.
func TestSchemaCall(t *testing.T) {
	ping := map[string]any{"type": "function", "function": map[string]any{
		"name": "ping", "description": "answer a ping",
		"parameters": map[string]any{"type": "object",
			"properties": map[string]any{"text": map[string]any{"type": "string"}, "n": map[string]any{"type": "integer"}},
			"required":   []string{"text", "n"}},
	}}
	for _, root := range []string{"", "."} {
		_, url := start(t, Config{Root: root})
		ask := user(`Call the ping tool with the text "reika".`)
		c := chatOK(t, url, with(body(ask), "tools", []any{ping}))
		calls := c.Choices[0].Message.ToolCalls
		if len(calls) != 1 || calls[0].Function.Name != "ping" || calls[0].Function.Arguments != `{"n":1,"text":"reika"}` {
			t.Fatalf("root %q: tool calls = %+v, want ping with {\"n\":1,\"text\":\"reika\"}", root, calls)
		}
		if got := c.Choices[0].FinishReason; got != "tool_calls" {
			t.Errorf("root %q: finish_reason = %q, want tool_calls", root, got)
		}

		// After the result comes back, the model answers in text.
		call := msg{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"id": calls[0].ID, "type": "function",
			"function": map[string]any{"name": "ping", "arguments": calls[0].Function.Arguments}}}}
		result := msg{"role": "tool", "tool_call_id": calls[0].ID, "content": "pong"}
		c = chatOK(t, url, with(body(ask, call, result), "tools", []any{ping}))
		if n := len(c.Choices[0].Message.ToolCalls); n != 0 || c.content() == "" {
			t.Errorf("root %q: after the result: %d tool calls, content %q; want a text answer", root, n, c.content())
		}

		// tool_choice none still gets text.
		c = chatOK(t, url, with(body(ask), "tools", []any{ping}, "tool_choice", "none"))
		if n := len(c.Choices[0].Message.ToolCalls); n != 0 {
			t.Errorf("root %q: tool_choice none: %d tool calls, want none", root, n)
		}
	}
}

// The note a request with tool_choice "none" gets lists the facts planted
// in the conversation ("FACT key: value"), newest value for a key.
func TestNoteKeepsFacts(t *testing.T) {
	_, url := start(t, Config{})
	call := msg{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
		"id": "call_1", "type": "function", "function": map[string]any{"name": "read", "arguments": `{"path":"a.go"}`}}}}
	result := msg{"role": "tool", "tool_call_id": "call_1", "content": "x\nFACT port: 8080\nFACT owner: ops team\ny\nFACT port: 8443\n"}
	c := chatOK(t, url, with(body(user("Find the port.\nFACT deadline: friday"), call, result), "tools", toolDefs("read"), "tool_choice", "none"))
	note := c.content()
	for _, want := range []string{"- port: 8443\n", "- owner: ops team\n", "- deadline: friday\n"} {
		if !strings.Contains(note, want) {
			t.Errorf("note = %q, want it to list %q", note, want)
		}
	}
	if strings.Contains(note, "8080") {
		t.Errorf("note = %q keeps the older value of port", note)
	}
}
