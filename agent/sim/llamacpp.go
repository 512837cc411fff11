package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// buildInfo is the llama.cpp build the simulator reports (/props
// build_info, system_fingerprint).
const buildInfo = "b9928-reikasim"

// trainedCtx is the model's trained context: larger than the served window,
// as it usually is, so that a client mistaking it for the window is caught.
func (s *Server) trainedCtx() int { return max(32768, 2*s.cfg.Ctx) }

// llamaCpp is the flavour of llama.cpp's llama-server: the window in
// /v1/models meta and /props, one prompt cache per slot, timings in every
// answer, a prompt that does not fit refused.
type llamaCpp struct{}

func (llamaCpp) defaultModel() string { return "models/reika-sim-7b-q4_k_m.gguf" }

// routes mounts llama-server's endpoints; all but the health, models and
// chat endpoints wait for the model to load.
func (llamaCpp) routes(s *Server, mux *http.ServeMux) {
	mux.HandleFunc("GET /health", s.llamaHealth)
	mux.HandleFunc("GET /v1/health", s.llamaHealth)
	mux.HandleFunc("GET /v1/models", s.llamaModels)
	mux.HandleFunc("GET /models", s.llamaModels)
	props, slots := s.llamaProps, s.llamaSlots
	if s.cfg.Router {
		props, slots = s.routerProps, s.forModel(s.llamaSlots)
	}
	mux.HandleFunc("GET /props", s.whenLoaded(props))
	mux.HandleFunc("GET /slots", s.whenLoaded(slots))
	mux.HandleFunc("POST /slots/{id}", s.whenLoaded(s.slotAction))
	mux.HandleFunc("POST /tokenize", s.whenLoaded(s.llamaTokenize))
	mux.HandleFunc("POST /detokenize", s.whenLoaded(s.llamaDetokenize))
	mux.HandleFunc("POST /apply-template", s.whenLoaded(s.applyTemplate))
	mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	mux.HandleFunc("POST /chat/completions", s.handleChat)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeJSON(w, http.StatusNotFound,
			obj{{"error", obj{{"code", 404}, {"message", "File Not Found"}, {"type", "not_found_error"}}}})
	})
}

func (llamaCpp) defaultListen() string { return "127.0.0.1:8080" }

func (llamaCpp) newCache(n int, m CacheModel) (promptCache, *slotPool) {
	p := newSlotPool(n, m)
	return p, p
}

func (llamaCpp) loads() bool { return true }

func (llamaCpp) serverHeader() string    { return "llama.cpp" }
func (llamaCpp) jsonContentType() string { return "application/json; charset=utf-8" }

func (llamaCpp) errorBody(status int, msg string) obj {
	return obj{{"error", obj{{"code", status}, {"message", msg}, {"type", llamaErrorType(status)}}}}
}

func llamaErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401, 403:
		return "authentication_error"
	case 404:
		return "not_found_error"
	case 429:
		return "rate_limit_error"
	case 501:
		return "not_supported_error"
	case 503:
		return "unavailable_error"
	}
	return "server_error"
}

// writeLoading is llama.cpp's answer while its model loads.
func (s *Server) writeLoading(w http.ResponseWriter) {
	s.writeJSON(w, http.StatusServiceUnavailable,
		obj{{"error", obj{{"code", 503}, {"message", "Loading model"}, {"type", "unavailable_error"}}}})
}

// fit refuses a prompt that fills the window, as llama.cpp does, and
// otherwise lets the reply run to the window's end or max_tokens.
func (llamaCpp) fit(c *chat, toks []string, window int) (fitting, *refusal) {
	n := len(toks)
	if n >= window {
		msg := fmt.Sprintf("request (%d tokens) exceeds the available context size (%d tokens), try increasing it", n, window)
		return fitting{}, &refusal{status: http.StatusBadRequest, msg: msg, body: obj{{"error", obj{
			{"code", 400}, {"message", msg}, {"type", "exceed_context_size_error"},
			{"n_prompt_tokens", n}, {"n_ctx", window},
		}}}}
	}
	limit := window - n
	if c.maxTokens >= 0 {
		limit = min(limit, c.maxTokens)
	}
	return fitting{tokens: toks, limit: limit}, nil
}

func (llamaCpp) completionID(seq int) string { return randomCompletionID(seq) }

func (f llamaCpp) completionBody(a answer, msg obj) obj {
	return obj{
		{"choices", []any{obj{{"finish_reason", a.gen.Finish}, {"index", 0}, {"message", msg}}}},
		{"created", a.created}, {"model", a.model}, {"system_fingerprint", buildInfo},
		{"object", "chat.completion"}, {"usage", f.usageObj(a.fig)}, {"id", a.id},
		{"timings", f.timingsObj(a.fig)},
	}
}

func (llamaCpp) reasoningKey() string { return "reasoning_content" }

func (llamaCpp) toolCallObj(tc toolCall, fn obj) obj {
	return obj{{"type", "function"}, {"function", fn}, {"id", tc.ID}}
}

func (llamaCpp) usageObj(f figures) obj {
	return obj{{"completion_tokens", f.predictedN}, {"prompt_tokens", f.promptTokens},
		{"total_tokens", f.promptTokens + f.predictedN}, {"prompt_tokens_details", obj{{"cached_tokens", f.cacheN}}}}
}

// timingsObj is llama.cpp's timings object.
func (llamaCpp) timingsObj(f figures) obj {
	perToken := func(ms float64, n int) (float64, float64) {
		if n == 0 || ms == 0 {
			return 0, 0
		}
		return ms / float64(n), 1e3 * float64(n) / ms
	}
	ppt, pps := perToken(f.promptMS, f.promptN)
	dpt, dps := perToken(f.predictedMS, f.predictedN)
	return obj{
		{"cache_n", f.cacheN}, {"prompt_n", f.promptN}, {"prompt_ms", f.promptMS},
		{"prompt_per_token_ms", ppt}, {"prompt_per_second", pps},
		{"predicted_n", f.predictedN}, {"predicted_ms", f.predictedMS},
		{"predicted_per_token_ms", dpt}, {"predicted_per_second", dps},
	}
}

func (llamaCpp) roleDelta() obj { return obj{{"role", "assistant"}, {"content", nil}} }

func (llamaCpp) chunkObj(a answer, choices []any) obj {
	return obj{{"choices", choices}, {"created", a.created}, {"id", a.id}, {"model", a.model},
		{"system_fingerprint", buildInfo}, {"object", "chat.completion.chunk"}}
}

func (llamaCpp) choiceObj(delta obj, finish any) obj {
	return obj{{"finish_reason", finish}, {"index", 0}, {"delta", delta}}
}

// whenLoaded answers 503 "Loading model" while the model loads.
func (s *Server) whenLoaded(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.loading() {
			s.writeLoading(w)
			return
		}
		h(w, r)
	}
}

func (s *Server) llamaHealth(w http.ResponseWriter, r *http.Request) {
	if s.loading() {
		s.writeLoading(w)
		return
	}
	s.writeJSON(w, http.StatusOK, obj{{"status", "ok"}})
}

// llamaModels is GET /v1/models: an Ollama-style "models" list beside the
// OpenAI "data" list, whose meta carries the slot window (null while
// loading).
func (s *Server) llamaModels(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Router {
		s.routerModels(w, r)
		return
	}
	m := s.cfg.Model
	meta := func(id string) any {
		if s.loading() {
			return nil
		}
		return obj{{"vocab_type", 1}, {"n_vocab", nVocab}, {"n_ctx", s.cfg.ctxOf(id)}, {"n_ctx_train", s.trainedCtx()},
			{"n_embd", 3584}, {"n_params", 7615616512}, {"size", 4683073536}, {"ftype", "Q4_K - Medium"}}
	}
	s.writeJSON(w, http.StatusOK, obj{
		{"models", []any{obj{
			{"name", m}, {"model", m}, {"modified_at", ""}, {"size", ""}, {"digest", ""},
			{"type", "model"}, {"description", ""}, {"tags", []string{""}},
			{"capabilities", []string{"completion"}}, {"parameters", ""},
			{"details", obj{{"parent_model", ""}, {"format", "gguf"}, {"family", ""},
				{"families", []string{""}}, {"parameter_size", ""}, {"quantization_level", ""}}},
		}}},
		{"object", "list"},
		{"data", s.listed(func(id string) obj {
			return obj{{"id", id}, {"aliases", []string{id}}, {"tags", []string{}}, {"object", "model"},
				{"created", s.created}, {"owned_by", "llamacpp"}, {"meta", meta(id)}}
		})},
	})
}

// listed is the data of /v1/models: entry for Model, then for each of
// Models.
func (s *Server) listed(entry func(id string) obj) []any {
	out := []any{entry(s.cfg.Model)}
	for _, id := range s.cfg.Models {
		out = append(out, entry(id))
	}
	return out
}

// genParams are the default sampling parameters, as /props and /slots
// show them.
func genParams() obj {
	return obj{
		{"seed", 4294967295}, {"temperature", 0.8}, {"top_k", 40}, {"top_p", 0.95}, {"min_p", 0.05},
		{"max_tokens", -1}, {"n_predict", -1}, {"n_keep", 0}, {"n_discard", 0}, {"stream", false},
		{"chat_format", "Content-only"}, {"reasoning_format", "deepseek"}, {"reasoning_in_content", false},
		{"samplers", []string{"penalties", "dry", "top_k", "typ_p", "top_p", "min_p", "xtc", "temperature"}},
		{"timings_per_token", false}, {"lora", []any{}},
	}
}

func (s *Server) llamaProps(w http.ResponseWriter, r *http.Request) {
	params := genParams()
	s.writeJSON(w, http.StatusOK, obj{
		{"default_generation_settings", obj{{"params", params}, {"n_ctx", s.cfg.Ctx}}},
		{"total_slots", s.cfg.Slots},
		{"model_alias", s.cfg.Model},
		{"model_ftype", "Q4_K - Medium"},
		{"model_path", s.cfg.Model},
		{"modalities", obj{{"vision", s.cfg.Vision}, {"video", false}, {"audio", false}}},
		{"media_marker", "<__media_reikasim__>"},
		{"endpoint_slots", true},
		{"endpoint_props", false},
		{"endpoint_metrics", false},
		{"ui", false},
		{"ui_settings", obj{}},
		{"chat_template", templateText(s.cfg.ReasoningTemplate)},
		{"chat_template_caps", obj{
			{"supports_object_arguments", true}, {"supports_parallel_tool_calls", true},
			{"supports_preserve_reasoning", s.cfg.ReasoningTemplate == AllReasoning || s.cfg.ReasoningTemplate == TurnReasoning}, {"supports_string_content", true},
			{"supports_system_role", true}, {"supports_tool_calls", true}, {"supports_tools", true},
			{"supports_typed_content", false},
		}},
		{"bos_token", bosToken},
		{"eos_token", "<|endoftext|>"},
		{"build_info", buildInfo},
		{"is_sleeping", false},
		{"cors_proxy_enabled", false},
	})
}

// llamaSlots is GET /slots in the shape of the captures: a slot never
// used shows only its id, window and state; a used one its last task's
// figures, the parameters and the next-token state. Like current builds it
// shows no prompt text.
func (s *Server) llamaSlots(w http.ResponseWriter, r *http.Request) {
	var out []any
	for _, st := range s.slots.snapshot() {
		o := obj{{"id", st.id}, {"n_ctx", s.cfg.Ctx}, {"speculative", false}, {"is_processing", st.busy}}
		if st.used {
			o = append(o,
				kv{"id_task", st.task}, kv{"n_prompt_tokens", st.nPrompt},
				kv{"n_prompt_tokens_processed", st.nPrompt - st.nCache}, kv{"n_prompt_tokens_cache", st.nCache},
				kv{"params", genParams()},
				kv{"next_token", []any{obj{{"has_next_token", st.busy}, {"has_new_line", false},
					{"n_remain", -1}, {"n_decoded", st.nDecoded}}}})
		}
		out = append(out, o)
	}
	s.writeJSON(w, http.StatusOK, out)
}

// llamaTokenize is POST /tokenize {"content", "add_special", "with_pieces"}.
func (s *Server) llamaTokenize(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Content    *string `json:"content"`
		AddSpecial bool    `json:"add_special"`
		WithPieces bool    `json:"with_pieces"`
	}
	if err := decodeBody(w, r, &req); err != nil || req.Content == nil {
		s.writeError(w, http.StatusBadRequest, "'content' must be a string")
		return
	}
	toks := Tokenize(*req.Content)
	if req.AddSpecial {
		toks = append([]string{bosToken}, toks...)
	}
	s.mu.Lock()
	for _, t := range toks {
		if len(s.vocab) < 1<<20 {
			s.vocab[tokenID(t)] = t
		}
	}
	s.mu.Unlock()
	out := make([]any, len(toks))
	for i, t := range toks {
		if req.WithPieces {
			out[i] = obj{{"id", tokenID(t)}, {"piece", t}}
		} else {
			out[i] = tokenID(t)
		}
	}
	s.writeJSON(w, http.StatusOK, obj{{"tokens", out}})
}

// llamaDetokenize is POST /detokenize {"tokens"}: it knows the pieces that
// /tokenize has handed out, and the special tokens.
func (s *Server) llamaDetokenize(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Tokens []int `json:"tokens"`
	}
	if err := decodeBody(w, r, &req); err != nil {
		s.writeError(w, http.StatusBadRequest, "'tokens' must be an array of token ids")
		return
	}
	var b strings.Builder
	s.mu.Lock()
	for _, id := range req.Tokens {
		b.WriteString(s.pieceOf(id))
	}
	s.mu.Unlock()
	s.writeJSON(w, http.StatusOK, obj{{"content", b.String()}})
}

// pieceOf is the text of a token id; s.mu is held.
func (s *Server) pieceOf(id int) string {
	if id == bosID {
		return bosToken
	}
	for _, sp := range specialTokens {
		if sp.id == id {
			return sp.text
		}
	}
	return s.vocab[id]
}

// applyTemplate is POST /apply-template: the rendered prompt of a chat
// request, without the BOS token.
func (s *Server) applyTemplate(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	if err != nil {
		s.writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	c, err := parseChat(body)
	if err != nil {
		s.writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	c.keepReasoning(s.cfg.ReasoningTemplate)
	s.writeJSON(w, http.StatusOK, obj{{"prompt", prefillPrompt(c.messages, c.tools)}})
}

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("could not read the request body: %v", err)
	}
	return body, nil
}

func decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	return json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(v)
}
