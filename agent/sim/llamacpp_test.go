package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLlamaShapes compares the key sets of the sim's answers with the real
// llama-server captures.
func TestLlamaShapes(t *testing.T) {
	s, url := start(t, Config{Ctx: 8192, Script: []Turn{{Content: "A plain answer."}, {Content: "Another answer."}}})
	_ = s
	chatReq := readCapture(t, "llama.cpp", "c8192-np1", "06-chat-2msg.request.json")
	streamReq := readCapture(t, "llama.cpp", "c8192-np1", "10-chat-stream.request.json")
	tests := []struct {
		name, method, path string
		body               []byte
		capture            string
		stop               []string
	}{
		{"health", "GET", "/health", nil, "01-health.json", nil},
		{"v1 models", "GET", "/v1/models", nil, "02-v1-models.json", nil},
		{"models", "GET", "/models", nil, "03-models.json", nil},
		{"props", "GET", "/props", nil, "04-props.json", []string{"default_generation_settings.params"}},
		{"slots idle", "GET", "/slots", nil, "05-slots-idle.json", nil},
		{"chat", "POST", "/v1/chat/completions", chatReq, "06-chat-2msg.response.json", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, got := do(t, tt.method, url+tt.path, tt.body)
			if status != 200 {
				t.Fatalf("%s %s = %d %s, want 200", tt.method, tt.path, status, got)
			}
			want := readCapture(t, "llama.cpp", "c8192-np1", tt.capture)
			if diff := cmp.Diff(flatKeys(t, want, tt.stop...), flatKeys(t, got, tt.stop...)); diff != "" {
				t.Errorf("%s %s keys differ from %s (-capture +sim):\n%s", tt.method, tt.path, tt.capture, diff)
			}
		})
	}
	t.Run("stream", func(t *testing.T) {
		status, got := do(t, "POST", url+"/v1/chat/completions", streamReq)
		if status != 200 {
			t.Fatalf("stream = %d, want 200", status)
		}
		gotEv := events(t, bytes.NewReader(got))
		wantEv := events(t, bytes.NewReader(readCapture(t, "llama.cpp", "c8192-np1", "10-chat-stream.sse.txt")))
		if gotEv[len(gotEv)-1] != "[DONE]" {
			t.Errorf("last event = %q, want [DONE]", gotEv[len(gotEv)-1])
		}
		// First chunk (role), a content chunk, the finish chunk, the usage chunk.
		for _, i := range []int{0, 1, -3, -2} {
			g, w := gotEv[(i+len(gotEv))%len(gotEv)], wantEv[(i+len(wantEv))%len(wantEv)]
			if diff := cmp.Diff(flatKeys(t, []byte(w)), flatKeys(t, []byte(g))); diff != "" {
				t.Errorf("event %d keys differ (-capture +sim):\n%s", i, diff)
			}
		}
	})
}

func TestLlamaOverflowBytes(t *testing.T) {
	_, url := start(t, Config{Ctx: 8192})
	req := readCapture(t, "llama.cpp", "c8192-np1", "12-chat-overflow.request.json")
	n := promptLen(t, json.RawMessage(req))
	for _, stream := range []bool{false, true} {
		t.Run("stream="+strconv.FormatBool(stream), func(t *testing.T) {
			var b map[string]any
			if err := json.Unmarshal(req, &b); err != nil {
				t.Fatal(err)
			}
			b["stream"] = stream
			resp, got := doResp(t, "POST", url+"/v1/chat/completions", b)
			if resp.StatusCode != 400 {
				t.Fatalf("status = %d, want 400", resp.StatusCode)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type = %q, want application/json", ct)
			}
			want := strings.ReplaceAll(string(readCapture(t, "llama.cpp", "c8192-np1", "12-chat-overflow.response.json")), "8903", strconv.Itoa(n))
			if string(got) != want {
				t.Errorf("overflow body =\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestLlamaCache(t *testing.T) {
	sys := system("You are a helpful coding assistant. Answer briefly.")
	q1 := user("What does the function parse_config in config.go return when the file is missing?")
	q2 := user("And what if the file exists but is empty?")
	edited := user("What does the function load_config in config.go return when the file is missing?")

	t.Run("repeat", func(t *testing.T) {
		_, url := start(t, Config{})
		first := chatOK(t, url, body(sys, q1))
		second := chatOK(t, url, body(sys, q1))
		n := first.Usage.PromptTokens
		if got := *second.Timings; got.CacheN != n-1 || got.PromptN != 1 {
			t.Errorf("repeat: cache_n, prompt_n = %d, %d, want %d, 1", got.CacheN, got.PromptN, n-1)
		}
		if got := second.Usage.PromptTokensDetails.CachedTokens; got != n-1 {
			t.Errorf("repeat: cached_tokens = %d, want %d", got, n-1)
		}
		if first.Timings.CacheN != 0 || first.Timings.PromptN != n {
			t.Errorf("cold: cache_n, prompt_n = %d, %d, want 0, %d", first.Timings.CacheN, first.Timings.PromptN, n)
		}
	})
	t.Run("append after a reply with reasoning", func(t *testing.T) {
		_, url := start(t, Config{Script: []Turn{{Reasoning: "Think first.", Content: "It returns an error."}, {Content: "ok"}}})
		first := chatOK(t, url, body(sys, q1))
		second := chatOK(t, url, body(sys, q1, assistant(first.content()), q2))
		if got, want := second.Timings.CacheN, first.Usage.PromptTokens; got != want {
			t.Errorf("append: cache_n = %d, want the previous prompt %d", got, want)
		}
	})
	t.Run("append after a plain reply", func(t *testing.T) {
		// The generated tokens stay in the slot, so a reply sent back as
		// it was generated is reused too.
		_, url := start(t, Config{Script: []Turn{{Content: "It returns an error."}, {Content: "ok"}}})
		first := chatOK(t, url, body(sys, q1))
		second := chatOK(t, url, body(sys, q1, assistant(first.content()), q2))
		if got, want := second.Timings.CacheN, first.Usage.TotalTokens; got != want {
			t.Errorf("append: cache_n = %d, want prompt+generated %d", got, want)
		}
	})
	t.Run("mid edit", func(t *testing.T) {
		_, url := start(t, Config{})
		chatOK(t, url, body(sys, q1, assistant("It returns an error."), q2))
		got := chatOK(t, url, body(sys, edited, assistant("It returns an error."), q2))
		prefix := renderPrompt([]message{{Role: "system", Content: sys["content"].(string)}}, nil)
		prefix = strings.TrimSuffix(prefix, generationPrompt) + "<|user|>\nWhat does the function"
		if want := len(PromptTokens(prefix)); got.Timings.CacheN != want {
			t.Errorf("mid edit: cache_n = %d, want %d (the tokens before the edit)", got.Timings.CacheN, want)
		}
	})
	t.Run("a last assistant message is prefilled", func(t *testing.T) {
		// llama.cpp renders a last assistant message unclosed, the start of
		// the turn the model goes on with: the request that carries the
		// whole of it then goes on from there, on a recurrent slot too.
		for _, kind := range []CacheKind{CacheDense, CacheRecurrent} {
			_, url := start(t, Config{Cache: CacheModel{Kind: kind}})
			first := chatOK(t, url, with(body(sys, q1, assistant("It returns an")), "max_tokens", 1))
			second := chatOK(t, url, body(sys, q1, assistant("It returns an error."), q2))
			want := len(PromptTokens(prefillPrompt([]message{{Role: "system", Content: sys["content"].(string)}, {Role: "user", Content: q1["content"].(string)}, {Role: "assistant", Content: "It returns an"}}, nil)))
			if first.Usage.PromptTokens != want {
				t.Errorf("%s: the prefill counted %d prompt tokens, want %d (no end of message, no generation prompt)", kind, first.Usage.PromptTokens, want)
			}
			if got := second.Timings.CacheN; got < want-4 || got > want {
				t.Errorf("%s: the whole message's request reused %d tokens of the %d-token prefill", kind, got, want)
			}
		}
	})
	t.Run("cache_prompt false", func(t *testing.T) {
		_, url := start(t, Config{})
		chatOK(t, url, body(sys, q1))
		got := chatOK(t, url, with(body(sys, q1), "cache_prompt", false))
		if got.Timings.CacheN != 0 {
			t.Errorf("cache_prompt false: cache_n = %d, want 0", got.Timings.CacheN)
		}
	})
}

func TestLlamaSlots(t *testing.T) {
	s, url := start(t, Config{Slots: 2})
	// Unrelated prompts share only "<s><|system|>\n", under a tenth of them.
	a := body(system("System prompt A, long enough to matter for the similarity rule."),
		user("first task: read the configuration loader and explain what happens when the file is missing"))
	b := body(system("Another system prompt, entirely different from the first one, and long."),
		user("second task: list every exported function in the package and say which ones have tests"))
	chatOK(t, url, a)
	chatOK(t, url, b)
	again := chatOK(t, url, a)
	recs := s.Requests()
	if recs[0].Slot == recs[1].Slot {
		t.Errorf("two unrelated conversations share slot %d, want separate slots", recs[0].Slot)
	}
	if recs[2].Slot != recs[0].Slot || again.Timings.PromptN != 1 {
		t.Errorf("conversation A again: slot %d prompt_n %d, want slot %d prompt_n 1", recs[2].Slot, again.Timings.PromptN, recs[0].Slot)
	}
	forced := chatOK(t, url, with(a, "id_slot", recs[1].Slot))
	if forced.Timings.CacheN >= again.Timings.CacheN {
		t.Errorf("id_slot %d: cache_n = %d, want less than in A's own slot", recs[1].Slot, forced.Timings.CacheN)
	}
	status, data := do(t, "GET", url+"/slots", nil)
	var slots []map[string]any
	if err := json.Unmarshal(data, &slots); status != 200 || err != nil || len(slots) != 2 {
		t.Fatalf("GET /slots = %d %s, want two slots", status, data)
	}
	status, data = do(t, "GET", url+"/props", nil)
	if !strings.Contains(string(data), `"total_slots":2`) {
		t.Errorf("GET /props = %d %s, want total_slots 2", status, data)
	}
}

// TestLlamaWindowBoundary: a prompt of n_ctx-1 tokens fits and generates
// one token; n_ctx tokens are refused.
func TestLlamaWindowBoundary(t *testing.T) {
	const window = 512
	_, url := start(t, Config{Ctx: window, Script: []Turn{{Content: "A long answer that goes on and on for many tokens."}}})
	fits := body(userOfSize(t, nil, window-1))
	got := chatOK(t, url, fits)
	if got.Usage.PromptTokens != window-1 || got.Usage.CompletionTokens != 1 || got.Choices[0].FinishReason != "length" {
		t.Errorf("n_ctx-1: prompt %d completion %d finish %q, want %d 1 length",
			got.Usage.PromptTokens, got.Usage.CompletionTokens, got.Choices[0].FinishReason, window-1)
	}
	status, data := do(t, "POST", url+"/v1/chat/completions", body(userOfSize(t, nil, window)))
	if status != 400 || !strings.Contains(string(data), `"n_prompt_tokens":512,"n_ctx":512`) {
		t.Errorf("n_ctx: %d %s, want 400 exceed_context_size_error", status, data)
	}
}

// TestLlamaLengthStop: like capture 13, generation stops when prompt plus
// reply reach the window, or at max_tokens.
func TestLlamaLengthStop(t *testing.T) {
	const window = 1024
	long := Turn{Content: strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20)}
	tests := []struct {
		name           string
		prompt, maxTok int
		wantCompletion int
		wantFinish     string
	}{
		{"window", window - 24, 100, 24, "length"},
		{"max_tokens", 100, 8, 8, "length"},
		{"room to finish", 100, -1, CountTokens(long.Content), "stop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, url := start(t, Config{Ctx: window, Script: []Turn{long}})
			b := body(userOfSize(t, nil, tt.prompt))
			if tt.maxTok >= 0 {
				b = with(b, "max_tokens", tt.maxTok)
			}
			got := chatOK(t, url, b)
			if got.Usage.CompletionTokens != tt.wantCompletion || got.Choices[0].FinishReason != tt.wantFinish {
				t.Errorf("completion_tokens, finish = %d, %q, want %d, %q",
					got.Usage.CompletionTokens, got.Choices[0].FinishReason, tt.wantCompletion, tt.wantFinish)
			}
			if got.Usage.TotalTokens != got.Usage.PromptTokens+got.Usage.CompletionTokens {
				t.Errorf("total_tokens = %d, want %d", got.Usage.TotalTokens, got.Usage.PromptTokens+got.Usage.CompletionTokens)
			}
			if got.Timings.PredictedN != tt.wantCompletion {
				t.Errorf("predicted_n = %d, want %d", got.Timings.PredictedN, tt.wantCompletion)
			}
		})
	}
}

func TestLlamaLoading(t *testing.T) {
	s, url := start(t, Config{})
	s.SetLoading(true)
	loading := `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`
	for _, tt := range []struct{ method, path string }{{"GET", "/health"}, {"POST", "/v1/chat/completions"}, {"GET", "/props"}} {
		status, data := do(t, tt.method, url+tt.path, body(user("hi")))
		if status != 503 || string(data) != loading {
			t.Errorf("%s %s while loading = %d %s, want 503 %s", tt.method, tt.path, status, data, loading)
		}
	}
	_, data := do(t, "GET", url+"/v1/models", nil)
	if !strings.Contains(string(data), `"meta":null`) {
		t.Errorf("GET /v1/models while loading = %s, want meta null", data)
	}
	s.SetLoading(false)
	if status, data := do(t, "GET", url+"/health", nil); status != 200 || string(data) != `{"status":"ok"}` {
		t.Errorf("GET /health loaded = %d %s, want 200 {\"status\":\"ok\"}", status, data)
	}
	if _, err := New(Config{LoadTime: -1}); err == nil {
		t.Errorf("New(LoadTime -1) = nil error, want one")
	}
}

func TestLlamaEndpoints(t *testing.T) {
	_, url := start(t, Config{})
	t.Run("tokenize", func(t *testing.T) {
		status, data := do(t, "POST", url+"/tokenize", map[string]any{"content": "<|user|>\nfunc main() {}", "add_special": true, "with_pieces": true})
		want := `{"tokens":[{"id":1,"piece":"<s>"},{"id":32010,"piece":"<|user|>"}`
		if status != 200 || !strings.HasPrefix(string(data), want) {
			t.Fatalf("POST /tokenize = %d %s, want prefix %s", status, data, want)
		}
		var tok struct {
			Tokens []struct {
				ID int `json:"id"`
			} `json:"tokens"`
		}
		json.Unmarshal(data, &tok)
		ids := []int{}
		for _, x := range tok.Tokens {
			ids = append(ids, x.ID)
		}
		_, data = do(t, "POST", url+"/detokenize", map[string]any{"tokens": ids})
		if want := `{"content":"<s><|user|>\nfunc main() {}"}`; string(data) != want {
			t.Errorf("POST /detokenize = %s, want %s", data, want)
		}
	})
	t.Run("apply-template", func(t *testing.T) {
		req := readCapture(t, "llama.cpp", "c8192-np1", "15-apply-template.request.json")
		status, data := do(t, "POST", url+"/apply-template", req)
		want := readCapture(t, "llama.cpp", "c8192-np1", "15-apply-template.response.json")
		if status != 200 || string(data) != string(want) {
			t.Errorf("POST /apply-template = %d\n%s\nwant\n%s", status, data, want)
		}
	})
	t.Run("not found", func(t *testing.T) {
		status, data := do(t, "GET", url+"/nope", nil)
		if status != http.StatusNotFound || !strings.Contains(string(data), "not_found_error") {
			t.Errorf("GET /nope = %d %s, want 404 not_found_error", status, data)
		}
	})
}

func TestBadRequests(t *testing.T) {
	for _, f := range []Flavor{LlamaCpp, VLLM, Ollama} {
		s, url := start(t, Config{Flavor: f})
		tests := []struct {
			name, body, want string
		}{
			{"invalid JSON", `{"messages": [`, "invalid JSON"},
			{"no messages", `{"model": "m"}`, "'messages' is required"},
			{"empty messages", `{"messages": []}`, "'messages' is required"},
			{"bad role", `{"messages": [{"role": "wizard", "content": "hi"}]}`, "unsupported role"},
			{"bad content", `{"messages": [{"role": "user", "content": 42}]}`, "'content' must be"},
			{"bad tool_choice", `{"messages": [{"role": "user", "content": "hi"}], "tool_choice": "sometimes"}`, "invalid tool_choice"},
			{"bad tool", `{"messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function"}]}`, "tools[0]"},
		}
		for _, tt := range tests {
			t.Run(string(f)+"/"+tt.name, func(t *testing.T) {
				status, data := do(t, "POST", url+"/v1/chat/completions", tt.body)
				var e struct {
					Error struct {
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal(data, &e); status != 400 || err != nil || !strings.Contains(e.Error.Message, tt.want) {
					t.Errorf("POST %s = %d %s, want 400 with a message containing %q", tt.body, status, data, tt.want)
				}
			})
		}
		if n := len(s.Requests()); n != len(tests) {
			t.Errorf("%s: %d records, want %d (bad requests are recorded)", f, n, len(tests))
		}
	}
}

// TestConcurrent runs parallel requests through two slots; with -race it
// checks the locking, and every request is answered and recorded.
func TestConcurrent(t *testing.T) {
	s, url := start(t, Config{Slots: 2, Root: writeTree(t)})
	const n = 12
	errs := make(chan string, n)
	for i := range n {
		go func() {
			b := with(body(user(fmt.Sprintf("task %d: explain LoadConfig", i))), "tools", toolDefs("read", "grep"), "stream", i%2 == 0)
			resp, err := http.Post(url+"/v1/chat/completions", "application/json", bytes.NewReader(mustJSON(t, b)))
			if err != nil {
				errs <- err.Error()
				return
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				errs <- fmt.Sprintf("request %d = %d %s", i, resp.StatusCode, data)
				return
			}
			errs <- ""
		}()
	}
	for range n {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
	recs := s.Requests()
	if len(recs) != n {
		t.Fatalf("%d records, want %d", len(recs), n)
	}
	for _, r := range recs {
		if r.Slot < 0 || r.Slot > 1 || r.FinishReason != "tool_calls" {
			t.Errorf("record %d: slot %d finish %q, want slot 0 or 1 and tool_calls", r.Seq, r.Slot, r.FinishReason)
		}
	}
}
