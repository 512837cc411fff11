package sim

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// maxBody bounds a request body.
const maxBody = 64 << 20

// figures are the token accounting and modelled timings of one answer.
type figures struct {
	promptTokens int // tokens evaluated as the prompt
	cacheN       int
	promptN      int
	predictedN   int
	promptMS     float64
	predictedMS  float64
}

func (s *Server) figures(promptTokens, cacheN, predicted int) figures {
	f := figures{promptTokens: promptTokens, cacheN: cacheN, promptN: promptTokens - cacheN, predictedN: predicted}
	f.promptMS = round3(float64(f.promptN) * s.cfg.PrefillMSPerToken)
	f.predictedMS = round3(float64(predicted) * s.cfg.DecodeMSPerToken)
	return f
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// handleChat answers POST /v1/chat/completions.
func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if s.loading() {
		seq, _ := s.nextChat()
		s.record(&RequestRecord{Seq: seq, Slot: -1, MaxTokens: -1, Status: 503, Error: "Loading model"})
		s.writeLoading(w)
		return
	}
	body, readErr := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	c, err := parseChat(body)
	if readErr != nil {
		c, err = nil, fmt.Errorf("could not read the request body: %v", readErr)
	}
	if err != nil {
		seq, _ := s.nextChat()
		rec := &RequestRecord{Seq: seq, Body: body, Slot: -1, MaxTokens: -1}
		s.fail(w, rec, http.StatusBadRequest, err.Error())
		return
	}
	seq, fault := s.nextChat()
	rec := &RequestRecord{
		Seq: seq, Body: body, Stream: c.req.Stream, ToolChoice: c.toolChoice,
		Messages: len(c.messages), MaxTokens: c.maxTokens, Slot: -1, Status: 200,
		IncludeUsage: c.req.StreamOptions != nil && c.req.StreamOptions.IncludeUsage,
	}
	for _, t := range c.tools {
		rec.Tools = append(rec.Tools, t.Name)
	}
	rec.Fault = fault.String()
	if !s.sleep(ctx, fault.Latency) {
		rec.Cancelled = true
		s.record(rec)
		return
	}
	if fault.failing() {
		s.writeFault(w, rec, fault)
		return
	}

	// The prompt, and whether the window takes it.
	rec.Prompt = renderPrompt(c.messages, c.tools)
	toks := PromptTokens(rec.Prompt)
	rec.PromptTokens, rec.EvalTokens = len(toks), len(toks)
	window := s.cfg.Ctx
	limit := -1
	switch s.cfg.Flavor {
	case LlamaCpp:
		if len(toks) >= window {
			s.overflowLlama(w, rec, len(toks))
			return
		}
		limit = window - len(toks)
		if c.maxTokens >= 0 {
			limit = min(limit, c.maxTokens)
		}
	case VLLM:
		if msg := vllmOverflow(len(toks), c.maxTokens, window); msg != "" {
			s.fail(w, rec, http.StatusBadRequest, msg)
			return
		}
		limit = window - len(toks)
		if c.maxTokens >= 0 {
			limit = c.maxTokens
		}
	case Ollama:
		toks, rec.DroppedMessages = ollamaFit(c, window)
		rec.EvalTokens = len(toks)
		limit = c.maxTokens
	}

	// What the model says.
	rp, turnFault := s.chooseReply(c)
	rec.Source = rp.Source
	if turnFault != nil {
		fault = fault.merge(*turnFault)
		rec.Fault = fault.String()
		if !s.sleep(ctx, turnFault.Latency) {
			rec.Cancelled = true
			s.record(rec)
			return
		}
		if turnFault.failing() {
			s.writeFault(w, rec, fault)
			return
		}
	}

	idSlot := -1
	if c.req.IDSlot != nil {
		idSlot = *c.req.IDSlot
	}
	reuse := c.req.CachePrompt == nil || *c.req.CachePrompt
	h, err := s.cache.acquire(ctx, toks, idSlot, reuse)
	if err != nil {
		rec.Cancelled = true
		s.record(rec)
		return
	}
	gen := generate(rp, limit, fault.MalformedToolCalls)
	fig := s.figures(len(toks), h.cacheN, len(gen.Tokens))
	rec.Slot, rec.CacheN, rec.PromptN = h.slot, fig.cacheN, fig.promptN
	rec.CompletionTokens, rec.FinishReason = len(gen.Tokens), gen.Finish
	for _, tc := range gen.ToolCalls {
		rec.ToolCalls = append(rec.ToolCalls, tc.Name)
	}
	sent := 0
	defer func() {
		rec.SentTokens = sent
		h.done(slices.Concat(toks, gen.Tokens[:sent]), sent)
		s.record(rec)
	}()
	if s.cfg.Realtime && !s.sleep(ctx, msDuration(fig.promptMS)) {
		rec.Cancelled = true
		return
	}
	a := answer{c: c, gen: gen, fig: fig, id: completionID(s.cfg.Flavor, seq), created: time.Now().Unix(), fault: fault}
	if c.req.Stream {
		sent, rec.Cancelled = s.stream(ctx, w, a)
	} else {
		sent, rec.Cancelled = s.respond(ctx, w, a)
	}
}

// answer is everything needed to write one reply.
type answer struct {
	c       *chat
	gen     generation
	fig     figures
	id      string
	created int64
	fault   Fault
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// fail sends a JSON error and records it.
func (s *Server) fail(w http.ResponseWriter, rec *RequestRecord, status int, msg string) {
	rec.Status, rec.Error = status, msg
	s.record(rec)
	s.writeError(w, status, msg)
}

// overflowLlama is llama.cpp's refusal of a prompt that does not fit.
func (s *Server) overflowLlama(w http.ResponseWriter, rec *RequestRecord, n int) {
	msg := fmt.Sprintf("request (%d tokens) exceeds the available context size (%d tokens), try increasing it", n, s.cfg.Ctx)
	rec.Status, rec.Error = http.StatusBadRequest, msg
	s.record(rec)
	s.writeJSON(w, http.StatusBadRequest, obj{{"error", obj{
		{"code", 400}, {"message", msg}, {"type", "exceed_context_size_error"},
		{"n_prompt_tokens", n}, {"n_ctx", s.cfg.Ctx},
	}}})
}

// writeFault answers with a failing fault: a JSON error, or an HTML page.
func (s *Server) writeFault(w http.ResponseWriter, rec *RequestRecord, f Fault) {
	if f.HTML {
		status := f.htmlStatus()
		text := strconv.Itoa(status) + " " + http.StatusText(status)
		rec.Status, rec.Error = status, text
		s.record(rec)
		page := "<html>\r\n<head><title>" + text + "</title></head>\r\n<body>\r\n<center><h1>" + text +
			"</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
		w.Header().Set("Server", "nginx")
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", strconv.Itoa(len(page)))
		w.WriteHeader(status)
		io.WriteString(w, page)
		return
	}
	if f.Status == http.StatusServiceUnavailable && s.cfg.Flavor == LlamaCpp {
		rec.Status, rec.Error = 503, "Loading model"
		s.record(rec)
		s.writeLoading(w)
		return
	}
	msg := "simulated fault: " + http.StatusText(f.Status)
	switch f.Status {
	case 429:
		msg = "simulated fault: too many requests, retry later"
	case 500:
		msg = "simulated fault: internal server error"
	case 502:
		msg = "simulated fault: bad gateway"
	}
	s.fail(w, rec, f.Status, msg)
}

// completionID is a chat-completion id, deterministic per request number.
func completionID(f Flavor, seq int) string {
	if f == Ollama {
		return "chatcmpl-" + strconv.Itoa(100+seq)
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	rng := rand.New(rand.NewPCG(uint64(seq), 0x5eed))
	b := make([]byte, 32)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return "chatcmpl-" + string(b)
}

// respond writes a non-streamed completion. A cut or stall fault sends
// half of the body first. It returns the tokens delivered and whether the
// answer was broken off.
func (s *Server) respond(ctx context.Context, w http.ResponseWriter, a answer) (int, bool) {
	if s.cfg.Realtime && !s.sleep(ctx, msDuration(a.fig.predictedMS)) {
		return 0, true
	}
	body := mustEncode(s.completionBody(a))
	if a.fault.CutAfter == 0 && a.fault.StallAfter == 0 {
		w.Header().Set("Content-Type", s.jsonContentType())
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		if _, err := w.Write(body); err != nil {
			return 0, true
		}
		return len(a.gen.Tokens), false
	}
	w.Header().Set("Content-Type", s.jsonContentType())
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body[:len(body)/2])
	http.NewResponseController(w).Flush()
	if a.fault.CutAfter > 0 {
		cutConnection(w)
		return len(a.gen.Tokens) / 2, true
	}
	s.hang(ctx)
	return len(a.gen.Tokens) / 2, true
}

// cutConnection closes the client's connection abruptly: no terminating
// chunk, no [DONE]. Where the connection cannot be hijacked (HTTP/2) it
// aborts the handler instead, which resets the stream.
func cutConnection(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	rc.Flush()
	conn, _, err := rc.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	conn.Close()
}

// completionBody is the flavour's non-streamed chat completion.
func (s *Server) completionBody(a answer) obj {
	msg := s.messageObj(a.gen)
	switch s.cfg.Flavor {
	case VLLM:
		return obj{
			{"id", a.id}, {"object", "chat.completion"}, {"created", a.created}, {"model", s.cfg.Model},
			{"choices", []any{obj{{"index", 0}, {"message", msg}, {"logprobs", nil},
				{"finish_reason", a.gen.Finish}, {"stop_reason", nil}}}},
			{"service_tier", nil}, {"system_fingerprint", nil},
			{"usage", s.usageObj(a.fig)}, {"prompt_logprobs", nil}, {"kv_transfer_params", nil},
		}
	case Ollama:
		return obj{
			{"id", a.id}, {"object", "chat.completion"}, {"created", a.created}, {"model", s.cfg.Model},
			{"system_fingerprint", "fp_ollama"},
			{"choices", []any{obj{{"index", 0}, {"message", msg}, {"finish_reason", a.gen.Finish}}}},
			{"usage", s.usageObj(a.fig)},
		}
	}
	return obj{
		{"choices", []any{obj{{"finish_reason", a.gen.Finish}, {"index", 0}, {"message", msg}}}},
		{"created", a.created}, {"model", s.cfg.Model}, {"system_fingerprint", buildInfo},
		{"object", "chat.completion"}, {"usage", s.usageObj(a.fig)}, {"id", a.id},
		{"timings", timingsObj(a.fig)},
	}
}

func (s *Server) reasoningKey() string {
	if s.cfg.Flavor == LlamaCpp {
		return "reasoning_content"
	}
	return "reasoning"
}

func (s *Server) messageObj(g generation) obj {
	var content any = g.Content
	if g.Content == "" && len(g.ToolCalls) > 0 {
		content = nil
	}
	msg := obj{{"role", "assistant"}, {"content", content}}
	if g.Reasoning != "" {
		msg = append(msg, kv{s.reasoningKey(), g.Reasoning})
	}
	if len(g.ToolCalls) > 0 {
		calls := make([]any, len(g.ToolCalls))
		for i, tc := range g.ToolCalls {
			fn := obj{{"name", tc.Name}, {"arguments", tc.Arguments}}
			if s.cfg.Flavor == LlamaCpp {
				calls[i] = obj{{"type", "function"}, {"function", fn}, {"id", tc.ID}}
			} else {
				calls[i] = obj{{"id", tc.ID}, {"type", "function"}, {"function", fn}}
			}
		}
		msg = append(msg, kv{"tool_calls", calls})
	}
	return msg
}

func (s *Server) usageObj(f figures) obj {
	total := f.promptTokens + f.predictedN
	switch s.cfg.Flavor {
	case VLLM:
		return obj{{"prompt_tokens", f.promptTokens}, {"total_tokens", total},
			{"completion_tokens", f.predictedN}, {"prompt_tokens_details", obj{{"cached_tokens", f.cacheN}}}}
	case Ollama:
		return obj{{"prompt_tokens", f.promptTokens}, {"completion_tokens", f.predictedN}, {"total_tokens", total}}
	}
	return obj{{"completion_tokens", f.predictedN}, {"prompt_tokens", f.promptTokens}, {"total_tokens", total},
		{"prompt_tokens_details", obj{{"cached_tokens", f.cacheN}}}}
}

// timingsObj is llama.cpp's timings object.
func timingsObj(f figures) obj {
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
