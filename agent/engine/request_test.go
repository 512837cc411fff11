package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sentBody sends req through a Client with opts to a server that answers
// with the real 06-chat-2msg (or 10-chat-stream when streaming) capture,
// and returns the body and headers the server received.
func sentBody(t *testing.T, opts Options, req Request, stream bool) ([]byte, http.Header) {
	t.Helper()
	ans := llamaCapture(t, "c8192-np1/06-chat-2msg")
	var onDelta func(Delta)
	if stream {
		ans = llamaCapture(t, "c8192-np1/10-chat-stream")
		onDelta = func(Delta) {}
	}
	rec := &recorder{}
	opts.BaseURL = newServer(t, rec.wrap(ans))
	if _, err := NewClient(opts).Chat(t.Context(), req, onDelta); err != nil {
		t.Fatalf("Chat() error = %v", err)
	}
	return rec.last(t)
}

// topLevel decodes a body's top level.
func topLevel(t *testing.T, body []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("request body %s: %v", body, err)
	}
	return m
}

func ptr[T any](v T) *T { return &v }

func TestRequestFields(t *testing.T) {
	tests := []struct {
		name   string
		opts   Options
		req    Request
		stream bool
		want   map[string]string // top-level key → JSON value; "" means absent
	}{
		{
			name: "temperature 0 is sent",
			req:  Request{Messages: userRequest().Messages, Temperature: ptr(0.0)},
			want: map[string]string{"temperature": "0", "cache_prompt": "", "model": "", "max_tokens": ""},
		},
		{
			name: "no temperature",
			req:  userRequest(),
			want: map[string]string{"temperature": "", "stream": "false", "stream_options": ""},
		},
		{
			name: "llama.cpp gets cache_prompt",
			opts: Options{Flavor: LlamaCpp, Model: "tiny"},
			req:  Request{Messages: userRequest().Messages, MaxTokens: 8, Temperature: ptr(0.7)},
			want: map[string]string{"cache_prompt": "true", "model": `"tiny"`, "max_tokens": "8", "temperature": "0.7"},
		},
		{
			name: "llama.cpp gets the pinned slot",
			opts: Options{Flavor: LlamaCpp},
			req:  Request{Messages: userRequest().Messages, Slot: ptr(1)},
			want: map[string]string{"id_slot": "1", "cache_prompt": "true"},
		},
		{
			name: "vLLM gets no slot",
			opts: Options{Flavor: VLLM},
			req:  Request{Messages: userRequest().Messages, Slot: ptr(1)},
			want: map[string]string{"id_slot": ""},
		},
		{
			name: "vLLM gets no cache_prompt",
			opts: Options{Flavor: VLLM},
			req:  userRequest(),
			want: map[string]string{"cache_prompt": ""},
		},
		{
			name: "extras merged, the request's win, typed fields win over both",
			opts: Options{Flavor: LlamaCpp, Model: "m", Extra: map[string]any{"top_k": 20, "seed": 1, "cache_prompt": false, "model": "other"}},
			req: Request{Messages: userRequest().Messages, Temperature: ptr(0.2),
				Extra: map[string]any{"seed": 2, "temperature": 1.5, "messages": "nope",
					"chat_template_kwargs": map[string]any{"enable_thinking": false}}},
			want: map[string]string{"top_k": "20", "seed": "2", "cache_prompt": "false", "model": `"m"`, "temperature": "0.2",
				"chat_template_kwargs": `{"enable_thinking":false}`},
		},
		{
			name:   "streams ask for usage",
			opts:   Options{Flavor: LlamaCpp},
			req:    userRequest(),
			stream: true,
			want:   map[string]string{"stream": "true", "stream_options": `{"include_usage":true}`, "cache_prompt": "true"},
		},
		{
			name: "tools and tool choice",
			req: Request{Messages: userRequest().Messages, ToolChoice: "none", Tools: []Tool{
				{Name: "read", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
				{Name: "status"},
			}},
			want: map[string]string{
				"tool_choice": `"none"`,
				"tools": `[{"function":{"name":"read","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}},"type":"function"},` +
					`{"function":{"name":"status","parameters":{"type":"object","properties":{}}},"type":"function"}]`,
			},
		},
		{
			name: "no tool choice",
			req:  Request{Messages: userRequest().Messages, Tools: []Tool{{Name: "status"}}},
			want: map[string]string{"tool_choice": ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, _ := sentBody(t, tt.opts, tt.req, tt.stream)
			top := topLevel(t, body)
			if _, ok := top["messages"]; !ok || string(top["messages"]) == `"nope"` {
				t.Errorf("request messages = %s, want the messages", top["messages"])
			}
			for k, want := range tt.want {
				got, ok := top[k]
				switch {
				case want == "" && ok:
					t.Errorf("request %s = %s, want it absent", k, got)
				case want != "" && string(got) != want:
					t.Errorf("request %s = %s, want %s", k, got, want)
				}
			}
		})
	}
}

// agentTurns is a conversation with every kind of message.
func agentTurns() []Message {
	return []Message{
		{Role: "system", Content: "You are a coding agent. <rules> & more"},
		{Role: "user", Content: "Fix the bug in config.go"},
		{Role: "assistant", Reasoning: "Read it first: <think> & all", ToolCalls: []ToolCall{
			{ID: "call_1", Name: "read", Arguments: `{"path": "config.go"}`},
			{ID: "call_2", Name: "status"},
		}},
		{Role: "tool", ToolCallID: "call_1", Content: "package config\n\nfunc parse() {}\n"},
		{Role: "tool", ToolCallID: "call_2", Content: ""},
		{Role: "assistant", Content: "Done.", Reasoning: "It was easy."},
	}
}

// TestRequestMessages: every message as the engine reads it, reasoning
// sent back as reasoning_content where a message carries it.
func TestRequestMessages(t *testing.T) {
	body, _ := sentBody(t, Options{}, Request{Messages: agentTurns()}, false)
	var got []map[string]any
	if err := json.Unmarshal(topLevel(t, body)["messages"], &got); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"role": "system", "content": "You are a coding agent. <rules> & more"},
		{"role": "user", "content": "Fix the bug in config.go"},
		{"role": "assistant", "reasoning_content": "Read it first: <think> & all", "tool_calls": []any{
			map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "read", "arguments": `{"path": "config.go"}`}},
			map[string]any{"id": "call_2", "type": "function", "function": map[string]any{"name": "status", "arguments": "{}"}},
		}},
		{"role": "tool", "tool_call_id": "call_1", "content": "package config\n\nfunc parse() {}\n"},
		{"role": "tool", "tool_call_id": "call_2", "content": ""},
		{"role": "assistant", "content": "Done.", "reasoning_content": "It was easy."},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request messages mismatch (-want +got):\n%s", diff)
	}
}

// TestRequestReasoning: reasoning goes back on exactly the messages that
// carry it, under reasoning_content and no other key; a message that only
// reasoned keeps an empty content (llama.cpp refuses a message with
// neither content nor tool calls).
func TestRequestReasoning(t *testing.T) {
	msgs := []Message{
		{Role: "user", Content: "Explain main.go"},
		{Role: "assistant", Content: "It starts the server."}, // an earlier turn's, sent without
		{Role: "user", Content: "And the flags?"},
		{Role: "assistant", Reasoning: "Look at flag.Parse.", ToolCalls: []ToolCall{{ID: "c1", Name: "read", Arguments: `{"path":"main.go"}`}}},
		{Role: "tool", ToolCallID: "c1", Content: "flag.Parse()"},
		{Role: "assistant", Reasoning: "Nothing to add."},
	}
	for _, stream := range []bool{false, true} {
		body, _ := sentBody(t, Options{Flavor: LlamaCpp}, Request{Messages: msgs}, stream)
		var got []map[string]json.RawMessage
		if err := json.Unmarshal(topLevel(t, body)["messages"], &got); err != nil {
			t.Fatal(err)
		}
		for i, m := range got {
			r, ok := m["reasoning_content"]
			switch want := msgs[i].Reasoning; {
			case want == "" && ok:
				t.Errorf("stream %v: message %d reasoning_content = %s, want none", stream, i, r)
			case want != "" && string(r) != strconvQuote(want):
				t.Errorf("stream %v: message %d reasoning_content = %s, want %q", stream, i, r, want)
			}
			if _, ok := m["reasoning"]; ok {
				t.Errorf("stream %v: message %d has a reasoning key, want only reasoning_content", stream, i)
			}
		}
		if c, ok := got[5]["content"]; !ok || string(c) != `""` {
			t.Errorf("stream %v: the reasoning-only message's content = %s (present %v), want \"\"", stream, c, ok)
		}
	}
}

// strconvQuote is s as a JSON string.
func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestRequestDeterministic(t *testing.T) {
	opts := Options{Flavor: LlamaCpp, Model: "m", Extra: map[string]any{"top_k": 20, "min_p": 0.05, "seed": 1, "samplers": []string{"top_k", "temperature"}}}
	req := func(msgs []Message) Request {
		return Request{Messages: msgs, MaxTokens: 512, Temperature: ptr(0.0), ToolChoice: "auto",
			Tools: []Tool{{Name: "read", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}},
			Extra: map[string]any{"chat_template_kwargs": map[string]any{"b": 1, "a": 2}}}
	}
	for _, stream := range []bool{false, true} {
		short := agentTurns()[:4]
		a, _ := sentBody(t, opts, req(short), stream)
		b, _ := sentBody(t, opts, req(short), stream)
		if !bytes.Equal(a, b) {
			t.Errorf("request bodies for equal requests (stream %v) differ:\n%s\n%s", stream, a, b)
		}
		long, _ := sentBody(t, opts, req(agentTurns()), stream)
		// Everything up to the end of the shorter messages array (its ']'
		// excluded) is a byte prefix of the longer request.
		ms, ok := topLevel(t, a)["messages"]
		if !ok {
			t.Fatal("no messages")
		}
		end := bytes.Index(a, ms) + len(ms) - 1
		if !bytes.HasPrefix(long, a[:end]) {
			t.Errorf("longer request (stream %v) = %s, want it to start with %s", stream, long, a[:end])
		}
		if long[end] != ',' {
			t.Errorf("longer request (stream %v) continues with %q after the shorter messages, want ','", stream, long[end])
		}
	}
}

func TestRequestAuthorization(t *testing.T) {
	tests := []struct {
		key  string
		want string
	}{
		{"", ""},
		{"sk-local", "Bearer sk-local"},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			_, h := sentBody(t, Options{APIKey: tt.key}, userRequest(), stream)
			if got := h.Get("Authorization"); got != tt.want {
				t.Errorf("Authorization with key %q (stream %v) = %q, want %q", tt.key, stream, got, tt.want)
			}
		}
	}
}

func TestRequestRejected(t *testing.T) {
	tests := []struct {
		name string
		req  Request
		want string
	}{
		{"bad tool choice", Request{Messages: userRequest().Messages, ToolChoice: "read"}, "tool choice"},
		{"bad schema", Request{Messages: userRequest().Messages, Tools: []Tool{{Name: "x", Parameters: json.RawMessage(`{`)}}}, "tool x"},
		{"bad extra", Request{Messages: userRequest().Messages, Extra: map[string]any{"f": func() {}}}, "extra field f"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			c := NewClient(Options{BaseURL: newServer(t, rec.wrap(jsonReply(200, nil)))})
			_, err := c.Chat(t.Context(), tt.req, nil)
			if !errors.Is(err, BadRequest) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Chat() error = %v, want kind %v naming %q", err, BadRequest, tt.want)
			}
			if len(rec.bodies) != 0 {
				t.Errorf("Chat() sent %d requests, want none", len(rec.bodies))
			}
		})
	}
}

// TestRequestImages: a message with images goes as OpenAI content parts,
// its text first, then each image as a data URL; the model a request
// names replaces the client's.
func TestRequestImages(t *testing.T) {
	body, _ := sentBody(t, Options{Model: "coder-7b"}, Request{Model: "coder-vl", Messages: []Message{
		{Role: "user", Content: "What is drawn here?", Images: []Image{{MIME: "image/png", Data: "iVBORw0KGgo="}}},
	}}, false)
	top := topLevel(t, body)
	if string(top["model"]) != `"coder-vl"` {
		t.Errorf("model = %s, want the request's coder-vl", top["model"])
	}
	var got []map[string]any
	if err := json.Unmarshal(top["messages"], &got); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "What is drawn here?"},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,iVBORw0KGgo="}},
	}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request messages mismatch (-want +got):\n%s", diff)
	}
}
