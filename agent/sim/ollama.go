package sim

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ollamaVersion is the Ollama version the simulator reports.
const ollamaVersion = "0.12.6"

// ollamaKeep is Ollama's num_keep: the tokens kept at the start when a
// prompt must be cut inside its last message.
const ollamaKeep = 4

// ollama is the flavour of Ollama's OpenAI compatibility layer: no window
// in /v1/models (it is in /api/show and /api/ps), one prompt cache per
// slot reported without cached tokens, an overlong chat silently
// truncated (ollamaFit).
type ollama struct{}

func (ollama) defaultModel() string { return "reika-sim:7b" }

// routes mounts Ollama's native endpoints and its OpenAI layer.
func (ollama) routes(s *Server, mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "Ollama is running")
	})
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) {
		s.writeJSON(w, http.StatusOK, obj{{"version", ollamaVersion}})
	})
	mux.HandleFunc("GET /api/tags", s.ollamaTags)
	mux.HandleFunc("POST /api/show", s.ollamaShow)
	mux.HandleFunc("GET /api/ps", s.ollamaPS)
	mux.HandleFunc("GET /v1/models", s.ollamaModels)
	mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "404 page not found")
	})
}

func (ollama) defaultListen() string { return "127.0.0.1:11434" }

// newCache is one dense cache per slot: Ollama's runner keeps any common
// prefix.
func (ollama) newCache(n int, _ CacheModel) (promptCache, *slotPool) {
	p := newSlotPool(n, CacheModel{Kind: CacheDense})
	return p, p
}

func (ollama) loads() bool { return false }

func (ollama) serverHeader() string    { return "ollama" }
func (ollama) jsonContentType() string { return "application/json; charset=utf-8" }

func (ollama) errorBody(status int, msg string) obj {
	return obj{{"error", obj{{"message", msg}, {"type", ollamaErrorType(status)}, {"param", nil}, {"code", nil}}}}
}

func ollamaErrorType(status int) string {
	switch {
	case status == 429:
		return "rate_limit_error"
	case status < 500:
		return "invalid_request_error"
	}
	return "api_error"
}

// fit never refuses: it truncates the chat to the window (ollamaFit), and
// the reply runs to max_tokens or without a limit.
func (ollama) fit(c *chat, _ []string, window int) (fitting, *refusal) {
	toks, dropped := ollamaFit(c, window)
	return fitting{tokens: toks, dropped: dropped, limit: c.maxTokens}, nil
}

// completionID counts up from chatcmpl-101, as Ollama's ids do.
func (ollama) completionID(seq int) string { return "chatcmpl-" + strconv.Itoa(100+seq) }

func (f ollama) completionBody(a answer, msg obj) obj {
	return obj{
		{"id", a.id}, {"object", "chat.completion"}, {"created", a.created}, {"model", a.model},
		{"system_fingerprint", "fp_ollama"},
		{"choices", []any{obj{{"index", 0}, {"message", msg}, {"finish_reason", a.gen.Finish}}}},
		{"usage", f.usageObj(a.fig)},
	}
}

func (ollama) reasoningKey() string { return "reasoning" }

func (ollama) toolCallObj(tc toolCall, fn obj) obj {
	return obj{{"id", tc.ID}, {"type", "function"}, {"function", fn}}
}

func (ollama) usageObj(f figures) obj {
	return obj{{"prompt_tokens", f.promptTokens}, {"completion_tokens", f.predictedN},
		{"total_tokens", f.promptTokens + f.predictedN}}
}

func (ollama) timingsObj(figures) obj { return nil }

func (ollama) roleDelta() obj { return obj{{"role", "assistant"}, {"content", ""}} }

func (ollama) chunkObj(a answer, choices []any) obj {
	return obj{{"id", a.id}, {"object", "chat.completion.chunk"}, {"created", a.created},
		{"model", a.model}, {"system_fingerprint", "fp_ollama"}, {"choices", choices}}
}

func (ollama) choiceObj(delta obj, finish any) obj {
	return obj{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}
}

func (s *Server) ollamaDetails() obj {
	return obj{{"parent_model", ""}, {"format", "gguf"}, {"family", "qwen2"}, {"families", []string{"qwen2"}},
		{"parameter_size", "7.6B"}, {"quantization_level", "Q4_K_M"}}
}

const ollamaDigest = "5e1c0a0b9d3f4e2a8c7b6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a"

// ollamaModels is GET /v1/models: no window anywhere.
func (s *Server) ollamaModels(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, http.StatusOK, obj{{"object", "list"}, {"data", []any{obj{
		{"id", s.cfg.Model}, {"object", "model"}, {"created", s.created}, {"owned_by", "library"},
	}}}})
}

func (s *Server) ollamaTags(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, http.StatusOK, obj{{"models", []any{obj{
		{"name", s.cfg.Model}, {"model", s.cfg.Model},
		{"modified_at", time.Unix(s.created, 0).UTC().Format(time.RFC3339Nano)},
		{"size", 4683087332}, {"digest", ollamaDigest}, {"details", s.ollamaDetails()},
	}}}})
}

// ollamaShow is POST /api/show: the trained length in model_info, the
// configured window as num_ctx in parameters.
func (s *Server) ollamaShow(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
		Name  string `json:"name"`
	}
	if err := decodeBody(w, r, &req); err != nil {
		s.writeJSON(w, http.StatusBadRequest, obj{{"error", "invalid request body: " + err.Error()}})
		return
	}
	name := cmpOr(req.Model, req.Name)
	if !s.ollamaKnows(name) {
		s.writeJSON(w, http.StatusNotFound, obj{{"error", fmt.Sprintf("model '%s' not found", name)}})
		return
	}
	params := strings.Join([]string{
		ollamaParam("num_ctx", fmt.Sprint(s.cfg.Ctx)),
		ollamaParam("stop", `"<|end|>"`),
		ollamaParam("stop", `"<|endoftext|>"`),
		ollamaParam("temperature", "0.7"),
	}, "\n")
	s.writeJSON(w, http.StatusOK, obj{
		{"modelfile", fmt.Sprintf("# Modelfile generated by \"ollama show\"\nFROM %s\nPARAMETER num_ctx %d\n", s.cfg.Model, s.cfg.Ctx)},
		{"parameters", params},
		{"template", templateSource},
		{"details", s.ollamaDetails()},
		{"model_info", obj{
			{"general.architecture", "qwen2"}, {"general.file_type", 15},
			{"general.parameter_count", 7615616512}, {"general.quantization_version", 2},
			{"qwen2.attention.head_count", 28}, {"qwen2.attention.head_count_kv", 4},
			{"qwen2.block_count", 28}, {"qwen2.context_length", s.trainedCtx()},
			{"qwen2.embedding_length", 3584}, {"qwen2.feed_forward_length", 18944},
			{"tokenizer.ggml.model", "gpt2"},
		}},
		{"capabilities", []string{"completion", "tools"}},
		{"modified_at", time.Unix(s.created, 0).UTC().Format(time.RFC3339Nano)},
	})
}

func ollamaParam(name, value string) string { return fmt.Sprintf("%-30s %s", name, value) }

// ollamaKnows accepts the model's name, where no tag means ":latest".
func (s *Server) ollamaKnows(name string) bool {
	tagged := func(n string) string {
		if strings.Contains(n, ":") {
			return n
		}
		return n + ":latest"
	}
	return tagged(name) == tagged(s.cfg.Model)
}

// ollamaPS is GET /api/ps: the loaded model with its context length.
func (s *Server) ollamaPS(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, http.StatusOK, obj{{"models", []any{obj{
		{"name", s.cfg.Model}, {"model", s.cfg.Model}, {"size", 6104424448}, {"digest", ollamaDigest},
		{"details", s.ollamaDetails()},
		{"expires_at", time.Now().Add(5 * time.Minute).UTC().Format(time.RFC3339Nano)},
		{"size_vram", 6104424448}, {"context_length", s.cfg.Ctx},
	}}}})
}

// ollamaFit is Ollama's silent truncation: while the prompt does not fit
// the window it drops the oldest message that is neither a system message
// nor the last one; if that is not enough it keeps the first ollamaKeep
// tokens and the newest rest. It returns the tokens evaluated and how many
// messages were dropped.
func ollamaFit(c *chat, window int) ([]string, int) {
	lead, blocks := promptBlocks(c.messages, c.tools)
	// Every block starts with a special token, so the prompt's tokens are
	// the blocks' tokens end to end: count each block once.
	fixed := 1 + CountTokens(lead) + CountTokens(generationPrompt)
	counts := make([]int, len(blocks))
	total := fixed
	for i, b := range blocks {
		counts[i] = CountTokens(b)
		total += counts[i]
	}
	keep := slices.Repeat([]bool{true}, len(blocks))
	dropped := 0
	for i := 0; total >= window && i < len(blocks)-1; i++ {
		if c.messages[i].Role == "system" {
			continue
		}
		keep[i] = false
		total -= counts[i]
		dropped++
	}
	var b strings.Builder
	b.WriteString(lead)
	for i, blk := range blocks {
		if keep[i] {
			b.WriteString(blk)
		}
	}
	b.WriteString(generationPrompt)
	toks := PromptTokens(b.String())
	if len(toks) >= window {
		tail := window - 1 - ollamaKeep
		toks = append(toks[:ollamaKeep:ollamaKeep], toks[len(toks)-tail:]...)
	}
	return toks, dropped
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
