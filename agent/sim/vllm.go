package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// vllmVersion is the vLLM version the simulator reports.
const vllmVersion = "0.11.0"

func (s *Server) vllmRoutes(mux *http.ServeMux) {
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

// vllmModels is GET /v1/models with the window as max_model_len.
func (s *Server) vllmModels(w http.ResponseWriter, r *http.Request) {
	m := s.cfg.Model
	s.writeJSON(w, http.StatusOK, obj{
		{"object", "list"},
		{"data", []any{obj{
			{"id", m}, {"object", "model"}, {"created", s.created}, {"owned_by", "vllm"},
			{"root", m}, {"parent", nil}, {"max_model_len", s.cfg.Ctx},
			{"permission", []any{obj{
				{"id", "modelperm-reikasim"}, {"object", "model_permission"}, {"created", s.created},
				{"allow_create_engine", false}, {"allow_sampling", true}, {"allow_logprobs", true},
				{"allow_search_indices", false}, {"allow_view", true}, {"allow_fine_tuning", false},
				{"organization", "*"}, {"group", nil}, {"is_blocking", false},
			}}},
		}}},
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
		toks = PromptTokens(renderPrompt(c.messages, c.tools))
	}
	ids := make([]int, len(toks))
	for i, t := range toks {
		ids[i] = tokenID(t)
	}
	s.writeJSON(w, http.StatusOK, obj{{"count", len(ids)}, {"max_model_len", s.cfg.Ctx}, {"tokens", ids}, {"token_strs", nil}})
}
