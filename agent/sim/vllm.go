package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// vllmVersion is the vLLM version the simulator reports.
const vllmVersion = "0.11.0"

// vllm is the flavour of vLLM's OpenAI server: the window as
// max_model_len, one block prefix cache shared by all requests and
// reported as cached_tokens, no timings, an overflowing request refused.
type vllm struct{}

func (vllm) defaultModel() string { return "reika/sim-coder-7b" }

// routes mounts vLLM's endpoints.
func (vllm) routes(s *Server, mux *http.ServeMux) {
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, r *http.Request) {
		s.writeJSON(w, http.StatusOK, obj{{"version", vllmVersion}})
	})
	mux.HandleFunc("GET /v1/models", s.vllmModels)
	mux.HandleFunc("POST /tokenize", s.vllmTokenize)
	mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeJSON(w, http.StatusNotFound, obj{{"detail", "Not Found"}})
	})
}

func (vllm) defaultListen() string { return "127.0.0.1:8000" }

// newCache is vLLM's shared prefix cache in blocks of m.Block tokens;
// vLLM has no slots.
func (vllm) newCache(_ int, m CacheModel) (promptCache, *slotPool) {
	return &sharedCache{block: m.Block, budget: m.KVTokens, hybrid: m.Kind == CacheRecurrent}, nil
}

func (vllm) loads() bool { return false }

func (vllm) serverHeader() string    { return "uvicorn" }
func (vllm) jsonContentType() string { return "application/json" }

func (vllm) errorBody(status int, msg string) obj {
	return obj{{"error", obj{{"message", msg}, {"type", vllmErrorType(status)}, {"param", nil}, {"code", status}}}}
}

func vllmErrorType(status int) string {
	switch status {
	case 400:
		return "BadRequestError"
	case 404:
		return "NotFoundError"
	case 429:
		return "RateLimitError"
	case 503:
		return "ServiceUnavailableError"
	}
	return "InternalServerError"
}

// fit refuses a request whose prompt, or prompt plus max_tokens, does not
// fit the window (vllmOverflow); the reply may run to max_tokens, else to
// the window's end.
func (vllm) fit(c *chat, toks []string, window int) (fitting, *refusal) {
	if msg := vllmOverflow(len(toks), c.maxTokens, window); msg != "" {
		return fitting{}, &refusal{status: http.StatusBadRequest, msg: msg}
	}
	limit := window - len(toks)
	if c.maxTokens >= 0 {
		limit = c.maxTokens
	}
	return fitting{tokens: toks, limit: limit}, nil
}

func (vllm) completionID(seq int) string { return randomCompletionID(seq) }

func (f vllm) completionBody(a answer, msg obj) obj {
	return obj{
		{"id", a.id}, {"object", "chat.completion"}, {"created", a.created}, {"model", a.model},
		{"choices", []any{obj{{"index", 0}, {"message", msg}, {"logprobs", nil},
			{"finish_reason", a.gen.Finish}, {"stop_reason", nil}}}},
		{"service_tier", nil}, {"system_fingerprint", nil},
		{"usage", f.usageObj(a.fig)}, {"prompt_logprobs", nil}, {"kv_transfer_params", nil},
	}
}

func (vllm) reasoningKey() string { return "reasoning" }

func (vllm) toolCallObj(tc toolCall, fn obj) obj {
	return obj{{"id", tc.ID}, {"type", "function"}, {"function", fn}}
}

func (vllm) usageObj(f figures) obj {
	return obj{{"prompt_tokens", f.promptTokens}, {"total_tokens", f.promptTokens + f.predictedN},
		{"completion_tokens", f.predictedN}, {"prompt_tokens_details", obj{{"cached_tokens", f.cacheN}}}}
}

func (vllm) timingsObj(figures) obj { return nil }

func (vllm) roleDelta() obj { return obj{{"role", "assistant"}, {"content", ""}} }

func (vllm) chunkObj(a answer, choices []any) obj {
	return obj{{"id", a.id}, {"object", "chat.completion.chunk"}, {"created", a.created},
		{"model", a.model}, {"choices", choices}}
}

func (vllm) choiceObj(delta obj, finish any) obj {
	return obj{{"index", 0}, {"delta", delta}, {"logprobs", nil}, {"finish_reason", finish}}
}

// vllmModels is GET /v1/models with the window as max_model_len.
func (s *Server) vllmModels(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, http.StatusOK, obj{
		{"object", "list"},
		{"data", s.listed(func(m string) obj {
			return obj{{"id", m}, {"object", "model"}, {"created", s.created}, {"owned_by", "vllm"},
				{"root", m}, {"parent", nil}, {"max_model_len", s.cfg.ctxOf(m)},
				{"permission", []any{obj{
					{"id", "modelperm-reikasim"}, {"object", "model_permission"}, {"created", s.created},
					{"allow_create_engine", false}, {"allow_sampling", true}, {"allow_logprobs", true},
					{"allow_search_indices", false}, {"allow_view", true}, {"allow_fine_tuning", false},
					{"organization", "*"}, {"group", nil}, {"is_blocking", false},
				}}}}
		})},
	})
}

// vllmOverflow is vLLM's refusal of a request that does not fit, or "".
func vllmOverflow(prompt, maxTokens, window int) string {
	if prompt >= window {
		return fmt.Sprintf("This model's maximum context length is %d tokens. However, your request has %d input tokens. "+
			"Please reduce the length of the input messages.", window, prompt)
	}
	if maxTokens >= 0 && prompt+maxTokens > window {
		return fmt.Sprintf("'max_tokens' or 'max_completion_tokens' is too large: %d. This model's maximum context length "+
			"is %d tokens and your request has %d input tokens (%d > %d - %d). None",
			maxTokens, window, prompt, maxTokens, window, prompt)
	}
	return ""
}

// vllmTokenize is POST /tokenize {"prompt"} or {"messages", "tools"}.
func (s *Server) vllmTokenize(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	if err != nil {
		s.writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	var req struct {
		Prompt *string `json:"prompt"`
	}
	var toks []string
	if err := json.Unmarshal(body, &req); err == nil && req.Prompt != nil {
		toks = PromptTokens(*req.Prompt)
	} else {
		c, err := parseChat(body)
		if err != nil {
			s.writeError(w, http.StatusBadRequest, "want 'prompt' or 'messages': "+err.Error())
			return
		}
		c.keepReasoning(s.cfg.ReasoningTemplate)
		toks = PromptTokens(renderPrompt(c.messages, c.tools))
	}
	ids := make([]int, len(toks))
	for i, t := range toks {
		ids[i] = tokenID(t)
	}
	s.writeJSON(w, http.StatusOK, obj{{"count", len(ids)}, {"max_model_len", s.cfg.Ctx}, {"tokens", ids}, {"token_strs", nil}})
}
