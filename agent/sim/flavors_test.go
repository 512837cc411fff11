package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestVLLM(t *testing.T) {
	const window = 4096
	s, url := start(t, Config{Flavor: VLLM, Ctx: window, Script: []Turn{
		{Reasoning: "Consider the loader.", Content: "It returns an error."},
		{Content: "Fine."},
		{Content: "Again."},
	}})
	t.Run("models", func(t *testing.T) {
		status, data := do(t, "GET", url+"/v1/models", nil)
		want := readCapture(t, "docs-samples", "vllm_v1_models_constructed.json")
		if diff := cmp.Diff(flatKeys(t, want), flatKeys(t, data)); status != 200 || diff != "" {
			t.Errorf("GET /v1/models = %d, keys differ (-docs +sim):\n%s", status, diff)
		}
		if !strings.Contains(string(data), fmt.Sprintf(`"max_model_len":%d`, window)) || !strings.Contains(string(data), `"owned_by":"vllm"`) {
			t.Errorf("GET /v1/models = %s, want max_model_len %d and owned_by vllm", data, window)
		}
	})
	t.Run("no llama.cpp endpoints", func(t *testing.T) {
		for _, p := range []string{"/props", "/slots"} {
			if status, data := do(t, "GET", url+p, nil); status != 404 || string(data) != `{"detail":"Not Found"}` {
				t.Errorf("GET %s = %d %s, want 404 {\"detail\":\"Not Found\"}", p, status, data)
			}
		}
	})
	sys := system("You are a helpful coding assistant.")
	q := user("What does parse_config return when the file is missing? Explain in detail, please.")
	t.Run("reply", func(t *testing.T) {
		first := chatOK(t, url, body(sys, q))
		if first.Timings != nil {
			t.Errorf("vLLM reply has timings, want none")
		}
		if got := first.Choices[0].Message.Reasoning; got != "Consider the loader." {
			t.Errorf("message.reasoning = %q, want the scripted reasoning", got)
		}
		if first.Choices[0].Message.ReasoningContent != "" {
			t.Errorf("message.reasoning_content is set; vLLM sends reasoning")
		}
		second := chatOK(t, url, body(sys, q))
		n := first.Usage.PromptTokens
		if got, want := second.Usage.PromptTokensDetails.CachedTokens, (n-1)/DefaultBlock*DefaultBlock; got != want {
			t.Errorf("repeat: cached_tokens = %d, want %d (whole %d-token blocks)", got, want, DefaultBlock)
		}
	})
	t.Run("overflow", func(t *testing.T) {
		over := body(userOfSize(t, nil, window))
		status, data := do(t, "POST", url+"/v1/chat/completions", with(over, "stream", true))
		want := fmt.Sprintf(`{"error":{"message":"This model's maximum context length is %d tokens. However, your request has %d input tokens. Please reduce the length of the input messages.","type":"BadRequestError","param":null,"code":400}}`, window, window)
		if status != 400 || string(data) != want {
			t.Errorf("prompt = window: %d\n%s\nwant 400\n%s", status, data, want)
		}
	})
	t.Run("max_tokens too large", func(t *testing.T) {
		prompt := 2778
		b := with(body(userOfSize(t, nil, prompt)), "max_tokens", 8000)
		status, data := do(t, "POST", url+"/v1/chat/completions", b)
		want := strings.ReplaceAll(string(readCapture(t, "docs-samples", "vllm_error_max_tokens_too_large.json")), "\n", "")
		if status != 400 || string(data) != want {
			t.Errorf("max_tokens 8000: %d\n%s\nwant 400\n%s", status, data, want)
		}
	})
	t.Run("stream reasoning", func(t *testing.T) {
		s.AppendScript(Turn{Reasoning: "Streamed thoughts.", Content: "Streamed answer."})
		for s.ScriptLeft() > 1 {
			chatOK(t, url, body(sys, q))
		}
		status, data := do(t, "POST", url+"/v1/chat/completions", with(body(sys, q), "stream", true))
		if status != 200 || !strings.Contains(string(data), `"delta":{"reasoning":"`) || strings.Contains(string(data), "reasoning_content") {
			t.Errorf("vLLM stream = %d %s, want reasoning in delta.reasoning", status, data)
		}
	})
}

func TestOllama(t *testing.T) {
	const window = 2048
	s, url := start(t, Config{Flavor: Ollama, Ctx: window})
	t.Run("models", func(t *testing.T) {
		status, data := do(t, "GET", url+"/v1/models", nil)
		want := fmt.Sprintf(`{"object":"list","data":[{"id":"reika-sim:7b","object":"model","created":%d,"owned_by":"library"}]}`, s.created)
		if status != 200 || string(data) != want {
			t.Errorf("GET /v1/models = %d %s, want %s", status, data, want)
		}
	})
	t.Run("show", func(t *testing.T) {
		status, data := do(t, "POST", url+"/api/show", map[string]any{"model": "reika-sim:7b"})
		want := readCapture(t, "docs-samples", "ollama_api_show_docs.json")
		if missing := missingKeys(flatKeys(t, want, "model_info"), flatKeys(t, data, "model_info")); status != 200 || len(missing) > 0 {
			t.Errorf("POST /api/show = %d, lacks the documented keys %v", status, missing)
		}
		var show struct {
			Parameters string         `json:"parameters"`
			ModelInfo  map[string]any `json:"model_info"`
		}
		json.Unmarshal(data, &show)
		if !strings.Contains(show.Parameters, fmt.Sprintf("num_ctx                        %d", window)) {
			t.Errorf("parameters = %q, want num_ctx %d", show.Parameters, window)
		}
		if got := show.ModelInfo["qwen2.context_length"]; got != float64(32768) {
			t.Errorf("model_info qwen2.context_length = %v, want the trained 32768", got)
		}
		if status, _ := do(t, "POST", url+"/api/show", map[string]any{"model": "other"}); status != 404 {
			t.Errorf("POST /api/show unknown model = %d, want 404", status)
		}
	})
	t.Run("ps", func(t *testing.T) {
		status, data := do(t, "GET", url+"/api/ps", nil)
		want := readCapture(t, "docs-samples", "ollama_api_ps_docs.json")
		if missing := missingKeys(flatKeys(t, want), flatKeys(t, data)); status != 200 || len(missing) > 0 {
			t.Errorf("GET /api/ps = %d, lacks the documented keys %v", status, missing)
		}
		if !strings.Contains(string(data), fmt.Sprintf(`"context_length":%d`, window)) {
			t.Errorf("GET /api/ps = %s, want context_length %d", data, window)
		}
		for _, p := range []string{"/api/version", "/api/tags", "/"} {
			if status, data := do(t, "GET", url+p, nil); status != 200 {
				t.Errorf("GET %s = %d %s, want 200", p, status, data)
			}
		}
	})
	t.Run("silent truncation", func(t *testing.T) {
		sys := system("You are a helpful coding assistant.")
		var msgs []msg
		msgs = append(msgs, sys)
		for i := range 40 {
			msgs = append(msgs, user(fmt.Sprintf("Question %d: %s", i, strings.Repeat("tell me more about the loader ", 10))),
				assistant(strings.Repeat("The loader reads the file and parses it. ", 8)))
		}
		msgs = append(msgs, user("Last question: what now?"))
		full := promptLen(t, body(msgs...))
		if full < 2*window {
			t.Fatalf("test conversation is %d tokens, want well over %d", full, window)
		}
		got := chatOK(t, url, body(msgs...))
		if got.Usage.PromptTokens >= window || got.Usage.PromptTokens > full/2 {
			t.Errorf("prompt_tokens = %d, want under the window %d and far below the full %d", got.Usage.PromptTokens, window, full)
		}
		if got.Usage.PromptTokensDetails != nil || got.Timings != nil {
			t.Errorf("Ollama usage has prompt_tokens_details or timings, want neither")
		}
		recs := waitRecords(t, s, 1)
		rec := recs[len(recs)-1]
		if rec.PromptTokens != full || rec.EvalTokens != got.Usage.PromptTokens || rec.DroppedMessages == 0 {
			t.Errorf("record: prompt %d eval %d dropped %d, want %d %d >0", rec.PromptTokens, rec.EvalTokens, rec.DroppedMessages, full, got.Usage.PromptTokens)
		}
		if !strings.Contains(rec.Prompt, "You are a helpful coding assistant.") {
			t.Errorf("record prompt lost the system message")
		}
	})
	t.Run("one huge message", func(t *testing.T) {
		got := chatOK(t, url, body(userOfSize(t, nil, 3*window)))
		if got.Usage.PromptTokens != window-1 {
			t.Errorf("prompt_tokens = %d, want %d (cut to fit)", got.Usage.PromptTokens, window-1)
		}
	})
	t.Run("not found", func(t *testing.T) {
		if status, data := do(t, "GET", url+"/props", nil); status != 404 || string(data) != "404 page not found" {
			t.Errorf("GET /props = %d %q, want 404 page not found", status, data)
		}
	})
}

// TestFlavorStreams checks each flavour's chunk shape and usage chunk.
func TestFlavorStreams(t *testing.T) {
	for _, f := range []Flavor{LlamaCpp, VLLM, Ollama} {
		for _, usage := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/include_usage=%v", f, usage), func(t *testing.T) {
				_, url := start(t, Config{Flavor: f, Script: []Turn{{Content: "Hello there, this is a streamed answer."}}})
				b := with(body(user("hi")), "stream", true)
				if usage {
					b = with(b, "stream_options", map[string]any{"include_usage": true})
				}
				resp, data := doResp(t, "POST", url+"/v1/chat/completions", b)
				if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
					t.Errorf("Content-Type = %q, want text/event-stream", ct)
				}
				ev := events(t, bytes.NewReader(data))
				if ev[len(ev)-1] != "[DONE]" {
					t.Fatalf("last event %q, want [DONE]", ev[len(ev)-1])
				}
				var text strings.Builder
				var finish string
				var sawUsage, sawTimings bool
				for _, e := range ev[:len(ev)-1] {
					var c struct {
						Choices []struct {
							Delta        map[string]any `json:"delta"`
							FinishReason *string        `json:"finish_reason"`
						} `json:"choices"`
						Usage   map[string]any `json:"usage"`
						Timings map[string]any `json:"timings"`
						Object  string         `json:"object"`
					}
					if err := json.Unmarshal([]byte(e), &c); err != nil {
						t.Fatalf("chunk %s: %v", e, err)
					}
					if c.Object != "chat.completion.chunk" {
						t.Errorf("object = %q, want chat.completion.chunk", c.Object)
					}
					sawUsage = sawUsage || c.Usage != nil
					sawTimings = sawTimings || c.Timings != nil
					if c.Usage != nil && len(c.Choices) != 0 {
						t.Errorf("usage chunk has %d choices, want none", len(c.Choices))
					}
					for _, ch := range c.Choices {
						if s, ok := ch.Delta["content"].(string); ok {
							text.WriteString(s)
						}
						if ch.FinishReason != nil {
							finish = *ch.FinishReason
						}
					}
				}
				if got := text.String(); got != "Hello there, this is a streamed answer." || finish != "stop" {
					t.Errorf("streamed %q finish %q, want the scripted text and stop", got, finish)
				}
				if sawUsage != usage {
					t.Errorf("usage chunk present = %v, want %v", sawUsage, usage)
				}
				if wantTimings := f == LlamaCpp; sawTimings != wantTimings {
					t.Errorf("timings present = %v, want %v", sawTimings, wantTimings)
				}
			})
		}
	}
}

// missingKeys lists the keys of want that got lacks.
func missingKeys(want, got []string) []string {
	set := map[string]bool{}
	for _, k := range got {
		set[k] = true
	}
	var out []string
	for _, k := range want {
		if !set[k] {
			out = append(out, k)
		}
	}
	return out
}
