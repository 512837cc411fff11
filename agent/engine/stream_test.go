package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// chatStream runs a streamed Chat against h and returns the response, the
// error and every delta received.
func chatStream(t *testing.T, h http.Handler, opts Options) (*Response, []Delta, error) {
	t.Helper()
	opts.BaseURL = newServer(t, h)
	var deltas []Delta
	resp, err := NewClient(opts).Chat(t.Context(), userRequest(), func(d Delta) { deltas = append(deltas, d) })
	return resp, deltas, err
}

func TestChatStreamCapture(t *testing.T) {
	resp, deltas, err := chatStream(t, llamaCapture(t, "c8192-np1/10-chat-stream"), Options{})
	if err != nil {
		t.Fatalf("Chat(10-chat-stream) error = %v", err)
	}
	want := &Response{
		Model:        "models/tiny-random-llama.gguf",
		Content:      "सisteḪletelaravelühleugby Ту",
		FinishReason: "length",
		Usage:        Usage{PromptTokens: 59, CompletionTokens: 8, TotalTokens: 67, CachedTokens: 58},
		Timings:      &Timings{CacheN: 58, PromptN: 1, PromptMS: 16.011, PredictedN: 8, PredictedMS: 4.002},
	}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("Chat(10-chat-stream) mismatch (-want +got):\n%s", diff)
	}
	var sb strings.Builder
	for _, d := range deltas {
		sb.WriteString(d.Content)
	}
	if sb.String() != want.Content || len(deltas) != 8 {
		t.Errorf("Chat(10-chat-stream) deltas = %d joined %q, want 8 joined %q", len(deltas), sb.String(), want.Content)
	}
}

// chunk writes one data line holding a choice with delta d (JSON) and an
// optional finish reason.
func chunk(d, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":` + d + `,"finish_reason":` + f + `}]}`
}

func TestChatStreamToolCalls(t *testing.T) {
	readCall := ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"a.go"}`}
	grepCall := ToolCall{ID: "c2", Name: "grep", Arguments: `{"pattern":"x"}`}
	tests := []struct {
		name   string
		events []string
		want   []ToolCall
	}{
		{
			name: "pieces by index, two in parallel (OpenAI, vLLM, llama.cpp)",
			events: []string{
				chunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read","arguments":""}}]}`, ""),
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]}`, ""),
				chunk(`{"tool_calls":[{"index":1,"id":"c2","type":"function","function":{"name":"grep","arguments":"{\"pattern\""}}]}`, ""),
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"a.go\"}"}}]}`, ""),
				chunk(`{"tool_calls":[{"index":1,"function":{"arguments":":\"x\"}"}}]}`, ""),
				chunk(`{}`, "tool_calls"),
				`data: [DONE]`,
			},
			want: []ToolCall{readCall, grepCall},
		},
		{
			name: "whole calls in one chunk",
			events: []string{
				chunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.go\"}"}},`+
					`{"index":1,"id":"c2","type":"function","function":{"name":"grep","arguments":"{\"pattern\":\"x\"}"}}]}`, "tool_calls"),
				`data: [DONE]`,
			},
			want: []ToolCall{readCall, grepCall},
		},
		{
			name: "whole calls without index, one per chunk",
			events: []string{
				chunk(`{"tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.go\"}"}}]}`, ""),
				chunk(`{"tool_calls":[{"id":"c2","type":"function","function":{"name":"grep","arguments":"{\"pattern\":\"x\"}"}}]}`, ""),
				chunk(`{}`, "tool_calls"),
				`data: [DONE]`,
			},
			want: []ToolCall{readCall, grepCall},
		},
		{
			name: "index 0 reused, each call with its own id (Ollama)",
			events: []string{
				chunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.go\"}"}}]}`, ""),
				chunk(`{"tool_calls":[{"index":0,"id":"c2","type":"function","function":{"name":"grep","arguments":"{\"pattern\":\"x\"}"}}]}`, ""),
				chunk(`{}`, "tool_calls"),
				`data: [DONE]`,
			},
			want: []ToolCall{readCall, grepCall},
		},
		{
			name: "no index, no id, pieces",
			events: []string{
				chunk(`{"tool_calls":[{"function":{"name":"read","arguments":"{\"path\":"}}]}`, ""),
				chunk(`{"tool_calls":[{"function":{"arguments":"\"a.go\"}"}}]}`, ""),
				chunk(`{"tool_calls":[{"function":{"name":"grep","arguments":"{\"pattern\":\"x\"}"}}]}`, ""),
				chunk(`{}`, "tool_calls"),
				`data: [DONE]`,
			},
			want: []ToolCall{{ID: "call_0", Name: "read", Arguments: `{"path":"a.go"}`}, {ID: "call_1", Name: "grep", Arguments: `{"pattern":"x"}`}},
		},
		{
			name: "name repeated on every piece",
			events: []string{
				chunk(`{"tool_calls":[{"index":0,"id":"c1","function":{"name":"read","arguments":"{\"path\":"}}]}`, ""),
				chunk(`{"tool_calls":[{"index":0,"function":{"name":"read","arguments":"\"a.go\"}"}}]}`, ""),
				chunk(`{}`, "tool_calls"),
				`data: [DONE]`,
			},
			want: []ToolCall{readCall},
		},
		{
			name: "arguments as an object, and none at all",
			events: []string{
				chunk(`{"tool_calls":[{"index":0,"id":"c2","function":{"name":"grep","arguments":{"pattern":"x"}}},`+
					`{"index":1,"id":"c3","function":{"name":"status"}}]}`, "tool_calls"),
				`data: [DONE]`,
			},
			want: []ToolCall{grepCall, {ID: "c3", Name: "status", Arguments: "{}"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, deltas, err := chatStream(t, sseReply(tt.events...), Options{})
			if err != nil {
				t.Fatalf("Chat() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, resp.ToolCalls); diff != "" {
				t.Errorf("Chat() tool calls mismatch (-want +got):\n%s", diff)
			}
			if resp.FinishReason != "tool_calls" {
				t.Errorf("Chat() finish reason = %q, want %q", resp.FinishReason, "tool_calls")
			}
			// The deltas rebuild the same calls.
			args := make([]string, len(tt.want))
			for _, d := range deltas {
				if d.ToolCall == nil {
					continue
				}
				if d.ToolCall.Index < 0 || d.ToolCall.Index >= len(args) {
					t.Fatalf("delta index = %d, want 0…%d", d.ToolCall.Index, len(args)-1)
				}
				args[d.ToolCall.Index] += d.ToolCall.Arguments
			}
			for i, a := range args {
				if a != tt.want[i].Arguments && !(a == "" && tt.want[i].Arguments == "{}") {
					t.Errorf("deltas for call %d joined = %q, want %q", i, a, tt.want[i].Arguments)
				}
			}
		})
	}
}

func TestChatStreamReasoning(t *testing.T) {
	tests := []struct {
		name   string
		events []string
	}{
		{"reasoning_content", []string{
			chunk(`{"reasoning_content":"think "}`, ""), chunk(`{"reasoning_content":"first"}`, ""),
			chunk(`{"content":"4"}`, ""), chunk(`{"content":"2"}`, "stop"), `data: [DONE]`}},
		{"reasoning", []string{
			chunk(`{"reasoning":"think "}`, ""), chunk(`{"reasoning":"first","content":null}`, ""),
			chunk(`{"content":"42"}`, "stop"), `data: [DONE]`}},
		{"both, the same text", []string{
			chunk(`{"reasoning":"think ","reasoning_content":"think "}`, ""), chunk(`{"reasoning":"first","reasoning_content":"first"}`, ""),
			chunk(`{"content":"42"}`, "stop"), `data: [DONE]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, deltas, err := chatStream(t, sseReply(tt.events...), Options{})
			if err != nil {
				t.Fatalf("Chat() error = %v", err)
			}
			if resp.Reasoning != "think first" || resp.Content != "42" {
				t.Errorf("Chat() reasoning, content = %q, %q, want %q, %q", resp.Reasoning, resp.Content, "think first", "42")
			}
			var r strings.Builder
			for _, d := range deltas {
				r.WriteString(d.Reasoning)
			}
			if r.String() != "think first" {
				t.Errorf("reasoning deltas joined = %q, want %q", r.String(), "think first")
			}
		})
	}
}

func TestChatStreamEnds(t *testing.T) {
	tests := []struct {
		name string
		h    http.Handler
		want *Response
	}{
		{
			name: "timings on the finish chunk, no usage chunk, no [DONE]",
			h: sseReply(chunk(`{"content":"hi"}`, ""),
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"timings":{"cache_n":40,"prompt_n":2,"prompt_ms":1.5,"predicted_n":1,"predicted_ms":0.5}}`),
			want: &Response{Content: "hi", FinishReason: "stop", Usage: Usage{CachedTokens: 40},
				Timings: &Timings{CacheN: 40, PromptN: 2, PromptMS: 1.5, PredictedN: 1, PredictedMS: 0.5}},
		},
		{
			name: "keep-alive comments, more than go-openai's 300",
			h: sseReply(strings.Repeat(": keep-alive\n", 400)+chunk(`{"content":"hi"}`, "stop"),
				strings.Repeat(": ping\n\n", 400)+`data: [DONE]`),
			want: &Response{Content: "hi", FinishReason: "stop", Usage: Usage{CachedTokens: -1}},
		},
		{
			name: "a whole JSON answer to a streamed request",
			h:    llamaCapture(t, "c8192-np1/06-chat-2msg"),
			want: &Response{Model: "models/tiny-random-llama.gguf", Content: "सisteḪletelaravelühleugby Ту", FinishReason: "length",
				Usage:   Usage{PromptTokens: 34, CompletionTokens: 8, TotalTokens: 42, CachedTokens: 0},
				Timings: &Timings{CacheN: 0, PromptN: 34, PromptMS: 3.282, PredictedN: 8, PredictedMS: 4.103}},
		},
		{
			name: "the connection drops after the finish reason",
			h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Header().Set("Content-Length", "100000")
				io.WriteString(w, chunk(`{"content":"hi"}`, "stop")+"\n\n")
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler)
			}),
			want: &Response{Content: "hi", FinishReason: "stop", Usage: Usage{CachedTokens: -1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, _, err := chatStream(t, tt.h, Options{})
			if err != nil {
				t.Fatalf("Chat() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, resp); diff != "" {
				t.Errorf("Chat() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// writeThenHold sends the events, then nothing until the client leaves.
func writeThenHold(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			io.WriteString(w, e+"\n\n")
		}
		w.(http.Flusher).Flush()
		hold(w, r)
	}
}

func TestChatStreamFaults(t *testing.T) {
	tests := []struct {
		name    string
		h       http.Handler
		opts    Options
		kind    Kind
		content string // what arrived before the fault
		msgHas  string
	}{
		{
			name: "ends without finish or [DONE]",
			h:    sseReply(chunk(`{"content":"par"}`, ""), chunk(`{"content":"tial"}`, "")),
			kind: StreamCut, content: "partial", msgHas: "without a finish reason",
		},
		{
			name: "connection dropped mid-answer",
			h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, chunk(`{"content":"par"}`, "")+"\n\n")
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler)
			}),
			kind: StreamCut, content: "par",
		},
		{
			name: "empty stream",
			h:    sseReply(),
			kind: StreamCut,
		},
		{
			name: "silent after the first chunk",
			h:    writeThenHold(chunk(`{"content":"par"}`, "")),
			opts: Options{Timeouts: Timeouts{Idle: 200 * time.Millisecond}},
			kind: Timeout, content: "par", msgHas: "no data for 200ms",
		},
		{
			name: "silent between chunks, however long the wait for the first",
			h:    writeThenHold(chunk(`{"content":"par"}`, "")),
			opts: Options{Timeouts: Timeouts{Idle: time.Hour, Chunk: 200 * time.Millisecond}},
			kind: Timeout, content: "par", msgHas: "the answer stopped: no data for 200ms",
		},
		{
			name: "silent before the headers",
			h:    http.HandlerFunc(hold),
			opts: Options{Timeouts: Timeouts{Idle: 200 * time.Millisecond}},
			kind: Timeout, msgHas: "no data for 200ms",
		},
		{
			name: "error event (llama.cpp)",
			h: writeThenHold(chunk(`{"content":"par"}`, ""),
				`data: {"error":{"code":500,"message":"Failed to parse tool call","type":"server_error"}}`),
			kind: Server, content: "par", msgHas: "Failed to parse tool call",
		},
		{
			name: "error event after comment lines",
			h: sseReply(chunk(`{"content":"par"}`, ""), ": ping",
				`data: {"error":{"code":400,"message":"request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}`),
			kind: Overflow, content: "par",
		},
		{
			name: "flat error event (old vLLM)",
			h:    sseReply(chunk(`{"content":"par"}`, ""), `data: {"object":"error","message":"engine dead","type":"InternalServerError","code":500}`),
			kind: Server, content: "par", msgHas: "engine dead",
		},
		{
			name: "garbage data line",
			h:    sseReply(chunk(`{"content":"par"}`, ""), `data: {"choices":[{`),
			kind: BadResponse, content: "par", msgHas: "not a stream chunk",
		},
		{
			name: "malformed tool arguments",
			h: sseReply(
				chunk(`{"tool_calls":[{"index":0,"id":"c1","function":{"name":"edit","arguments":"{\"path\":\"a.go\","}}]}`, ""),
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"old\":}"}}]}`, "tool_calls"),
				`data: [DONE]`),
			kind: BadToolCall, msgHas: "call 0 edit (id c1)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, _, err := chatStream(t, tt.h, tt.opts)
			if !errors.Is(err, tt.kind) {
				t.Fatalf("Chat() error = %v (kind %v), want kind %v", err, kindOf(err), tt.kind)
			}
			if !strings.Contains(err.Error(), tt.msgHas) {
				t.Errorf("Chat() error = %q, want it to contain %q", err, tt.msgHas)
			}
			if tt.content != "" && (resp == nil || resp.Content != tt.content) {
				t.Errorf("Chat() response = %+v, want content %q", resp, tt.content)
			}
			if tt.kind == BadToolCall && (resp == nil || len(resp.ToolCalls) != 1) {
				t.Errorf("Chat() response = %+v, want the malformed call beside the error", resp)
			}
		})
	}
}

// TestChatStreamCancel cancels the caller's context mid-stream and checks
// that the engine sees the client leave, so it stops generating.
func TestChatStreamCancel(t *testing.T) {
	gone := make(chan struct{})
	base := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(gone)
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; ; i++ {
			fmt.Fprintf(w, "%s\n\n", chunk(fmt.Sprintf(`{"content":"t%d "}`, i), ""))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	resp, err := NewClient(Options{BaseURL: base}).Chat(ctx, userRequest(), func(d Delta) {
		if strings.Contains(d.Content, "t2") {
			cancel()
		}
	})
	if !errors.Is(err, Canceled) {
		t.Fatalf("Chat(canceled mid-stream) error = %v, want kind %v", err, Canceled)
	}
	if resp == nil || !strings.HasPrefix(resp.Content, "t0 t1 t2") {
		t.Errorf("Chat(canceled mid-stream) response = %+v, want what arrived", resp)
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the engine did not see the client leave within 5s")
	}
}

// BenchmarkAssemble decodes and assembles a long stream: 4000 content
// pieces and a tool call whose arguments come in 4000 pieces.
func BenchmarkAssemble(b *testing.B) {
	var lines [][]byte
	for i := range 4000 {
		lines = append(lines, []byte(`{"choices":[{"index":0,"delta":{"content":"word `+fmt.Sprint(i)+` "}}]}`))
	}
	lines = append(lines, []byte(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"write","arguments":"{\"text\":\""}}]}}]}`))
	for range 4000 {
		lines = append(lines, []byte(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"abcdefgh"}}]}}]}`))
	}
	lines = append(lines, []byte(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"}"}}]},"finish_reason":"tool_calls"}]}`))
	for b.Loop() {
		a := newAssembler(func(Delta) {})
		for _, l := range lines {
			var ch wireChunk
			if err := json.Unmarshal(l, &ch); err != nil {
				b.Fatal(err)
			}
			a.add(&ch)
		}
		if r := a.finish(); len(r.ToolCalls) != 1 || len(r.ToolCalls[0].Arguments) != 4000*8+11 {
			b.Fatalf("assembled %d calls, arguments %d bytes", len(r.ToolCalls), len(r.ToolCalls[0].Arguments))
		}
	}
}

// llama.cpp sends a stream's headers before its prefill: the wait for the
// first byte of the answer, not the shorter one between chunks, covers the
// prefill after them.
func TestChatStreamHeadersBeforePrefill(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		time.Sleep(400 * time.Millisecond) // the prefill
		io.WriteString(w, chunk(`{"content":"done"}`, "stop")+"\n\ndata: [DONE]\n\n")
	})
	resp, _, err := chatStream(t, h, Options{Timeouts: Timeouts{Idle: 5 * time.Second, Chunk: 100 * time.Millisecond}})
	if err != nil || resp.Content != "done" {
		t.Fatalf("Chat() = %+v, %v; want the answer after a prefill longer than the wait between chunks", resp, err)
	}
}

// An engine that goes on generating past max_tokens is stopped by the
// client: it stops reading at the limit and a margin, and the reply is
// taken as cut by the limit. The handler would send ten times as much and
// then hold the connection open; the test ends only because the client
// closed it.
func TestChatStreamStopsPastMaxTokens(t *testing.T) {
	var sent atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 1000 && r.Context().Err() == nil; i++ {
			io.WriteString(w, chunk(`{"content":"word "}`, "")+"\n\n")
			w.(http.Flusher).Flush()
			sent.Add(1)
		}
		hold(w, r)
	})
	req := userRequest()
	req.MaxTokens = 100
	opts := Options{BaseURL: newServer(t, h)}
	resp, err := NewClient(opts).Chat(t.Context(), req, func(Delta) {})
	if err != nil {
		t.Fatalf("Chat() error = %v", err)
	}
	if !resp.Overran || resp.FinishReason != "length" {
		t.Fatalf("Overran %v, finish %q; want the reply taken as cut at the limit", resp.Overran, resp.FinishReason)
	}
	if n := strings.Count(resp.Content, "word"); n <= 100 || n > 100+64+1 {
		t.Errorf("read %d pieces for max_tokens 100; want the limit and its margin", n)
	}
}
