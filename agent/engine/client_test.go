package engine

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestChatCompletion(t *testing.T) {
	tests := []struct {
		name  string
		reply reply
		want  *Response
	}{
		{
			name:  "llama.cpp 06-chat-2msg",
			reply: llamaCapture(t, "c8192-np1/06-chat-2msg"),
			want: &Response{
				Model:        "models/tiny-random-llama.gguf",
				Content:      "सisteḪletelaravelühleugby Ту",
				FinishReason: "length",
				Usage:        Usage{PromptTokens: 34, CompletionTokens: 8, TotalTokens: 42, CachedTokens: 0},
				Timings:      &Timings{CacheN: 0, PromptN: 34, PromptMS: 3.282, PredictedN: 8, PredictedMS: 4.103},
			},
		},
		{
			name:  "llama.cpp 07-chat-2msg-repeat",
			reply: llamaCapture(t, "c8192-np1/07-chat-2msg-repeat"),
			want: &Response{
				Model:        "models/tiny-random-llama.gguf",
				Content:      "सisteḪletelaravelühleugby Ту",
				FinishReason: "length",
				Usage:        Usage{PromptTokens: 34, CompletionTokens: 8, TotalTokens: 42, CachedTokens: 33},
				Timings:      &Timings{CacheN: 33, PromptN: 1, PromptMS: 0.974, PredictedN: 8, PredictedMS: 3.609},
			},
		},
		{
			name: "reasoning (Ollama, newer vLLM)",
			reply: jsonReply(200, []byte(`{"model":"qwen3","choices":[{"index":0,"finish_reason":"stop",`+
				`"message":{"role":"assistant","content":"42","reasoning":"think first"}}],`+
				`"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13}}`)),
			want: &Response{Model: "qwen3", Content: "42", Reasoning: "think first", FinishReason: "stop",
				Usage: Usage{PromptTokens: 10, CompletionTokens: 3, TotalTokens: 13, CachedTokens: -1}},
		},
		{
			name: "reasoning_content (llama.cpp, older vLLM)",
			reply: jsonReply(200, []byte(`{"choices":[{"finish_reason":"stop",`+
				`"message":{"role":"assistant","content":"42","reasoning_content":"think first"}}],`+
				`"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13,"prompt_tokens_details":{"cached_tokens":8}}}`)),
			want: &Response{Content: "42", Reasoning: "think first", FinishReason: "stop",
				Usage: Usage{PromptTokens: 10, CompletionTokens: 3, TotalTokens: 13, CachedTokens: 8}},
		},
		{
			name: "tool calls, arguments as a string and as an object",
			reply: jsonReply(200, []byte(`{"choices":[{"finish_reason":"tool_calls","message":{"role":"assistant","content":null,`+
				`"tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.go\"}"}},`+
				`{"id":"c2","type":"function","function":{"name":"grep","arguments":{"pattern":"x"}}},`+
				`{"type":"function","function":{"name":"status","arguments":""}}]}}]}`)),
			want: &Response{FinishReason: "tool_calls", Usage: Usage{CachedTokens: -1}, ToolCalls: []ToolCall{
				{ID: "c1", Name: "read", Arguments: `{"path":"a.go"}`},
				{ID: "c2", Name: "grep", Arguments: `{"pattern":"x"}`},
				{ID: "call_2", Name: "status", Arguments: `{}`},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewClient(Options{BaseURL: newServer(t, tt.reply)})
			got, err := c.Chat(t.Context(), userRequest(), nil)
			if err != nil {
				t.Fatalf("Chat() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Chat() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestChatErrors checks that each failure is classified, both for a
// whole answer and for a streamed one (llama.cpp sends the status before
// any event).
func TestChatErrors(t *testing.T) {
	html502 := reply{status: 502, header: http.Header{"Content-Type": {"text/html"}},
		body: []byte("<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>\n")}
	tests := []struct {
		name       string
		reply      reply
		kind       Kind
		status     int
		prompt     int
		window     int
		msgHas     string
		streamOnly bool
		wholeOnly  bool
	}{
		{name: "llama.cpp overflow 8192", reply: llamaCapture(t, "c8192-np1/12-chat-overflow"),
			kind: Overflow, status: 400, prompt: 8903, window: 8192},
		{name: "llama.cpp overflow 2048 slots", reply: llamaCapture(t, "c8192-np4/12-chat-overflow-4k"),
			kind: Overflow, status: 400, prompt: 4009, window: 2048},
		{name: "llama.cpp overflow 2048", reply: llamaCapture(t, "c2048-np1/12-chat-overflow-4k"),
			kind: Overflow, status: 400, prompt: 4009, window: 2048},
		{name: "llama.cpp overflow docs", reply: jsonReply(400, readCapture(t, "docs-samples/llamacpp_error_exceed_context.json")),
			kind: Overflow, status: 400, prompt: 13392, window: 8192},
		{name: "vLLM overflow text", reply: jsonReply(400, readCapture(t, "docs-samples/vllm_error_max_tokens_too_large.json")),
			kind: Overflow, status: 400, prompt: 2778, window: 4096},
		{name: "old vLLM flat overflow (constructed)", reply: jsonReply(400, []byte(`{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`)),
			kind: Overflow, status: 400, prompt: 4000, window: 4096},
		{name: "vLLM tool choice", reply: jsonReply(400, readCapture(t, "docs-samples/vllm_error_auto_tool_choice.json")),
			kind: BadRequest, status: 400, msgHas: "enable-auto-tool-choice"},
		{name: "401", reply: jsonReply(401, readCapture(t, "docs-samples/llamacpp_error_generic_readme.json")),
			kind: Auth, status: 401, msgHas: "Invalid API Key"},
		{name: "403 plain", reply: reply{status: 403, body: []byte("forbidden")}, kind: Auth, status: 403},
		{name: "429", reply: jsonReply(429, []byte(`{"error":{"message":"slow down","type":"rate_limit_error"}}`)),
			kind: RateLimit, status: 429},
		{name: "404", reply: jsonReply(404, []byte(`{"error":"model \"x\" not found"}`)), kind: NotFound, status: 404},
		{name: "503 loading", reply: jsonReply(503, []byte(`{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`)),
			kind: Loading, status: 503},
		{name: "500", reply: jsonReply(500, []byte(`{"error":{"code":500,"message":"boom","type":"server_error"}}`)),
			kind: Server, status: 500, msgHas: "boom"},
		{name: "llama.cpp output not in the template's format", reply: jsonReply(500, []byte(`{"error":{"code":500,"message":"Failed to parse input at pos 12: the model's output does not match the expected Hermes 2 Pro format","type":"server_error"}}`)),
			kind: Template, status: 500, msgHas: "does not match the expected"},
		{name: "HTML 502", reply: html502, kind: Server, status: 502, msgHas: `an HTML page titled "502 Bad Gateway"`},
		{name: "garbage on 200", reply: jsonReply(200, []byte("{\"choices\": [oops")),
			kind: BadResponse, status: 200, msgHas: "not a chat completion", wholeOnly: true},
		{name: "empty on 200", reply: jsonReply(200, nil), kind: BadResponse, status: 200, msgHas: "empty body", wholeOnly: true},
		{name: "no choices on 200", reply: jsonReply(200, []byte(`{"object":"list","data":[]}`)),
			kind: BadResponse, status: 200, msgHas: "without a message", wholeOnly: true},
		{name: "HTML on 200", reply: reply{status: 200, header: http.Header{"Content-Type": {"text/html"}},
			body: []byte("<html><head><title>Sign in</title></head></html>")},
			kind: BadResponse, status: 200, msgHas: `an HTML page titled "Sign in"`},
		{name: "HTML on 200 without a content type", reply: reply{status: 200,
			body: []byte("<html><head><title>Sign in</title></head></html>")},
			kind: BadResponse, msgHas: `an HTML page titled "Sign in"`, streamOnly: true},
		{name: "error body on 200", reply: jsonReply(200, []byte(`{"error":{"code":500,"message":"inference crashed"}}`)),
			kind: Server, status: 500, msgHas: "inference crashed"},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			if stream && tt.wholeOnly || !stream && tt.streamOnly {
				continue
			}
			name := tt.name + "/whole"
			var onDelta func(Delta)
			if stream {
				name = tt.name + "/stream"
				onDelta = func(Delta) {}
			}
			t.Run(name, func(t *testing.T) {
				base := newServer(t, tt.reply)
				_, err := NewClient(Options{BaseURL: base}).Chat(t.Context(), userRequest(), onDelta)
				if !errors.Is(err, tt.kind) {
					t.Fatalf("Chat() error = %v (kind %v), want kind %v", err, kindOf(err), tt.kind)
				}
				e, _ := AsError(err)
				if tt.status != 0 && e.Status != tt.status {
					t.Errorf("Chat() status = %d, want %d", e.Status, tt.status)
				}
				if e.PromptTokens != tt.prompt || e.Window != tt.window {
					t.Errorf("Chat() prompt, window = %d, %d, want %d, %d", e.PromptTokens, e.Window, tt.prompt, tt.window)
				}
				if !strings.Contains(err.Error(), tt.msgHas) {
					t.Errorf("Chat() error = %q, want it to contain %q", err, tt.msgHas)
				}
				if !strings.Contains(err.Error(), base) || !strings.Contains(err.Error(), opChat) {
					t.Errorf("Chat() error = %q, want it to name the endpoint %s and the op %q", err, base, opChat)
				}
			})
		}
	}
}

func TestChatUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	for _, stream := range []bool{false, true} {
		var onDelta func(Delta)
		if stream {
			onDelta = func(Delta) {}
		}
		_, err := NewClient(Options{BaseURL: base}).Chat(t.Context(), userRequest(), onDelta)
		if !errors.Is(err, Unreachable) {
			t.Errorf("Chat(closed port, stream %v) error = %v, want kind %v", stream, err, Unreachable)
		}
	}
	if _, err := NewClient(Options{}).Chat(t.Context(), userRequest(), nil); !errors.Is(err, Unreachable) {
		t.Errorf("Chat(no endpoint) error = %v, want kind %v", err, Unreachable)
	}
}

func TestChatResponseTimeout(t *testing.T) {
	base := newServer(t, http.HandlerFunc(hold))
	c := NewClient(Options{BaseURL: base, Timeouts: Timeouts{Response: 200 * time.Millisecond}})
	_, err := c.Chat(t.Context(), userRequest(), nil)
	if !errors.Is(err, Timeout) {
		t.Fatalf("Chat(engine silent past Timeouts.Response) error = %v, want kind %v", err, Timeout)
	}
}

func TestChatCanceledBeforeAnswer(t *testing.T) {
	base := newServer(t, http.HandlerFunc(hold))
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := NewClient(Options{BaseURL: base}).Chat(ctx, userRequest(), nil)
	if !errors.Is(err, Canceled) {
		t.Fatalf("Chat(canceled) error = %v, want kind %v", err, Canceled)
	}
}

func TestChatMalformedToolArguments(t *testing.T) {
	body := []byte(`{"choices":[{"finish_reason":"tool_calls","message":{"role":"assistant",` +
		`"tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.go\"}"}},` +
		`{"id":"c2","type":"function","function":{"name":"edit","arguments":"{\"path\":\"a.go\",\"old\":"}},` +
		`{"id":"c3","type":"function","function":{"name":"grep","arguments":"[1]"}}]}}]}`)
	c := NewClient(Options{BaseURL: newServer(t, jsonReply(200, body))})
	resp, err := c.Chat(t.Context(), userRequest(), nil)
	if !errors.Is(err, BadToolCall) {
		t.Fatalf("Chat() error = %v, want kind %v", err, BadToolCall)
	}
	if resp == nil || len(resp.ToolCalls) != 3 {
		t.Fatalf("Chat() response = %+v, want the three calls beside the error", resp)
	}
	for _, want := range []string{"call 1 edit (id c2)", "call 2 grep (id c3)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Chat() error = %q, want it to name %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "id c1") {
		t.Errorf("Chat() error = %q, names the valid call c1", err)
	}
}

// TestChatConcurrent runs calls against engines with different answers at
// once: each must get its own (run with -race).
func TestChatConcurrent(t *testing.T) {
	answer := func(s string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if !strings.Contains(string(body), `"stream":true`) {
				jsonReply(200, []byte(`{"choices":[{"finish_reason":"stop","message":{"content":"`+s+`"}}]}`)).ServeHTTP(w, r)
				return
			}
			sseReply(
				`data: {"choices":[{"index":0,"delta":{"content":"`+s+`"}}]}`,
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
				`data: [DONE]`).ServeHTTP(w, r)
		})
	}
	a := NewClient(Options{BaseURL: newServer(t, answer("a"))})
	b := NewClient(Options{BaseURL: newServer(t, answer("b"))})
	var wg sync.WaitGroup
	for i := range 40 {
		c, want := a, "a"
		if i%2 == 1 {
			c, want = b, "b"
		}
		var onDelta func(Delta)
		if i%4 < 2 {
			onDelta = func(Delta) {}
		}
		wg.Go(func() {
			resp, err := c.Chat(t.Context(), userRequest(), onDelta)
			if err != nil {
				t.Errorf("Chat() error = %v", err)
				return
			}
			if resp.Content != want {
				t.Errorf("Chat() content = %q, want %q", resp.Content, want)
			}
		})
	}
	wg.Wait()
}

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
