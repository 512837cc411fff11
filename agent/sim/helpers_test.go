package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// capture is the path of a file under testdata/engine-captures.
func capture(parts ...string) string {
	return filepath.Join(append([]string{"..", "..", "testdata", "engine-captures"}, parts...)...)
}

func readCapture(t *testing.T, parts ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(capture(parts...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// start runs a Server for cfg behind httptest.
func start(t *testing.T, cfg Config) (*Server, string) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v) = %v", cfg, err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		s.Close()
		ts.Close()
	})
	return s, ts.URL
}

// do sends a request and returns the status and body.
func do(t *testing.T, method, url string, body any) (int, []byte) {
	t.Helper()
	resp, data := doResp(t, method, url, body)
	return resp.StatusCode, data
}

func doResp(t *testing.T, method, url string, body any) (*http.Response, []byte) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	case string:
		r = strings.NewReader(b)
	default:
		r = bytes.NewReader(mustJSON(t, b))
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, url, err)
	}
	return resp, data
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// msg is a chat message for request bodies.
type msg = map[string]any

func user(text string) msg      { return msg{"role": "user", "content": text} }
func system(text string) msg    { return msg{"role": "system", "content": text} }
func assistant(text string) msg { return msg{"role": "assistant", "content": text} }

// body is a chat request body.
func body(msgs ...msg) map[string]any {
	return map[string]any{"model": "m", "messages": msgs}
}

// with returns a copy of b with more fields.
func with(b map[string]any, kvs ...any) map[string]any {
	out := map[string]any{}
	for k, v := range b {
		out[k] = v
	}
	for i := 0; i+1 < len(kvs); i += 2 {
		out[kvs[i].(string)] = kvs[i+1]
	}
	return out
}

// toolDefs offers the named tools with a small schema.
func toolDefs(names ...string) []any {
	var out []any
	for _, n := range names {
		out = append(out, map[string]any{"type": "function", "function": map[string]any{
			"name": n, "description": "the " + n + " tool",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}},
		}})
	}
	return out
}

// completion is the part of a non-streamed response the tests read.
type completion struct {
	Choices []struct {
		FinishReason string `json:"finish_reason"`
		Message      struct {
			Role             string  `json:"role"`
			Content          *string `json:"content"`
			ReasoningContent string  `json:"reasoning_content"`
			Reasoning        string  `json:"reasoning"`
			ToolCalls        []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
	} `json:"choices"`
	Usage struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Timings *struct {
		CacheN     int     `json:"cache_n"`
		PromptN    int     `json:"prompt_n"`
		PromptMS   float64 `json:"prompt_ms"`
		PredictedN int     `json:"predicted_n"`
	} `json:"timings"`
}

// chatOK posts a chat request that must succeed.
func chatOK(t *testing.T, url string, b any) completion {
	t.Helper()
	status, data := do(t, "POST", url+"/v1/chat/completions", b)
	if status != 200 {
		t.Fatalf("POST /v1/chat/completions = %d %s, want 200", status, data)
	}
	var c completion
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
	if len(c.Choices) != 1 {
		t.Fatalf("choices = %d in %s, want 1", len(c.Choices), data)
	}
	return c
}

func (c completion) content() string {
	if p := c.Choices[0].Message.Content; p != nil {
		return *p
	}
	return ""
}

// events reads an SSE body into its data payloads.
func events(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

// flatKeys lists the key paths of a JSON value ("data[].meta.n_ctx"),
// not descending below the paths in stop.
func flatKeys(t *testing.T, data []byte, stop ...string) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
	set := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		for _, s := range stop {
			if prefix == s {
				return
			}
		}
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				set[p] = true
				walk(p, e)
			}
		case []any:
			for _, e := range x {
				walk(prefix+"[]", e)
			}
		}
	}
	walk("", v)
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// promptLen is the prompt size the sim computes for a request body.
func promptLen(t *testing.T, b any) int {
	t.Helper()
	n, err := CountPrompt(mustJSON(t, b))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// userOfSize is a user message that makes the request's prompt exactly n
// tokens: " a" is one token each.
func userOfSize(t *testing.T, pre []msg, n int) msg {
	t.Helper()
	base := promptLen(t, body(append(pre, user("x"))...))
	if n < base {
		t.Fatalf("prompt of %d tokens is below the minimum %d", n, base)
	}
	return user("x" + strings.Repeat(" a", n-base))
}

// chatCount is the number of chat requests received so far, finished or
// not.
func (s *Server) chatCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.chatSeq
}
