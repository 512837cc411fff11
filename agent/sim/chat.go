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

// handleChat answers POST /v1/chat/completions: it reads the request,
// applies its fault, fits the prompt to the window, chooses the reply
// (whose script turn may bring a fault of its own) and answers it
// (serveAnswer). Every chat request is recorded once.
func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if s.loading() {
		seq, _ := s.nextChat()
		s.record(&RequestRecord{Seq: seq, Slot: -1, MaxTokens: -1, Status: 503, Error: "Loading model"})
		s.writeLoading(w)
		return
	}
	s.wake()
	body, c, err := readChat(w, r)
	if err != nil {
		seq, _ := s.nextChat()
		rec := &RequestRecord{Seq: seq, Body: body, Slot: -1, MaxTokens: -1}
		s.fail(w, rec, http.StatusBadRequest, err.Error())
		return
	}
	c.scriptKey = r.Header.Get(ScriptHeader)
	if n := len(c.messages); s.cfg.NoPrefill && s.cfg.Flavor == LlamaCpp && n > 0 && c.messages[n-1].Role == "assistant" {
		seq, _ := s.nextChat()
		rec := newRecord(seq, body, c)
		rec.Headers = r.Header.Clone()
		s.fail(w, rec, http.StatusBadRequest, "Assistant response prefill is incompatible with enable_thinking.")
		return
	}
	c.keepReasoning(s.cfg.ReasoningTemplate)
	seq, fault := s.nextChat()
	rec := newRecord(seq, body, c)
	rec.Headers = r.Header.Clone()
	rec.Fault = fault.String()
	if s.faulted(ctx, w, rec, fault.Latency, fault) {
		return
	}
	fit, ok := s.fitWindow(w, rec, c)
	if !ok {
		return
	}
	rp, turnFault := s.chooseReply(c)
	rec.Source = rp.Source
	if turnFault != nil {
		fault = fault.merge(*turnFault)
		rec.Fault = fault.String()
		if s.faulted(ctx, w, rec, turnFault.Latency, fault) {
			return
		}
	}
	s.serveAnswer(ctx, w, rec, c, fit, rp, fault)
}

// readChat reads and parses a chat request. The body comes back even when
// it does not parse, for the record.
func readChat(w http.ResponseWriter, r *http.Request) ([]byte, *chat, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		return body, nil, fmt.Errorf("could not read the request body: %v", err)
	}
	c, err := parseChat(body)
	return body, c, err
}

// newRecord is the record of chat request seq as it arrived.
func newRecord(seq int, body []byte, c *chat) *RequestRecord {
	rec := &RequestRecord{
		Seq: seq, Body: body, Stream: c.req.Stream, ToolChoice: c.toolChoice,
		Messages: len(c.messages), MaxTokens: c.maxTokens, Slot: -1, Status: 200,
		IncludeUsage: c.req.StreamOptions != nil && c.req.StreamOptions.IncludeUsage,
	}
	for _, t := range c.tools {
		rec.Tools = append(rec.Tools, t.Name)
	}
	return rec
}

// faulted waits wait, then sends f if it fails the request. It reports
// whether the request ended there (the client went away, the server
// closed, or the fault was sent), in which case it is recorded.
func (s *Server) faulted(ctx context.Context, w http.ResponseWriter, rec *RequestRecord, wait time.Duration, f Fault) bool {
	if !s.sleep(ctx, wait) {
		rec.Cancelled = true
		s.record(rec)
		return true
	}
	if f.failing() {
		s.writeFault(w, rec, f)
		return true
	}
	return false
}

// fitWindow renders the prompt and has the flavour fit it to the window.
// A refusal is sent and recorded, and reported as false.
func (s *Server) fitWindow(w http.ResponseWriter, rec *RequestRecord, c *chat) (fitting, bool) {
	if s.cfg.Flavor == LlamaCpp {
		rec.Prompt = prefillPrompt(c.messages, c.tools)
	} else {
		rec.Prompt = renderPrompt(c.messages, c.tools)
	}
	toks := PromptTokens(rec.Prompt)
	rec.PromptTokens, rec.EvalTokens = len(toks), len(toks)
	fit, ref := s.fl.fit(c, toks, s.cfg.ctxOf(c.req.Model))
	if ref != nil {
		s.refuse(w, rec, ref)
		return fitting{}, false
	}
	rec.EvalTokens, rec.DroppedMessages = len(fit.tokens), fit.dropped
	return fit, true
}

// serveAnswer takes a prompt cache for the fitted prompt (waiting for a
// free slot), generates rp within the limit and sends it, streamed or not.
// The cache keeps the prompt and what was sent; the request is recorded
// when it ends.
func (s *Server) serveAnswer(ctx context.Context, w http.ResponseWriter, rec *RequestRecord, c *chat, fit fitting, rp reply, fault Fault) {
	idSlot := -1
	if c.req.IDSlot != nil {
		idSlot = *c.req.IDSlot
	}
	reuse := c.req.CachePrompt == nil || *c.req.CachePrompt
	h, err := s.cache.acquire(ctx, fit.tokens, idSlot, reuse)
	if err != nil {
		rec.Cancelled = true
		s.record(rec)
		return
	}
	limit := fit.limit
	if fault.IgnoreMaxTokens {
		limit = -1
	}
	gen := generate(rp, limit, fault.MalformedToolCalls)
	fig := s.figures(len(fit.tokens), h.cacheN, len(gen.Tokens))
	rec.Slot, rec.CacheN, rec.PromptN = h.slot, fig.cacheN, fig.promptN
	rec.Common, rec.Restart = h.common, h.restart
	rec.CompletionTokens, rec.FinishReason = len(gen.Tokens), gen.Finish
	for _, tc := range gen.ToolCalls {
		rec.ToolCalls = append(rec.ToolCalls, tc.Name)
	}
	sent := 0
	defer func() {
		rec.SentTokens = sent
		h.done(slices.Concat(fit.tokens, gen.Tokens[:sent]), sent)
		s.record(rec)
	}()
	if s.cfg.Realtime && !s.sleep(ctx, msDuration(fig.promptMS)) {
		rec.Cancelled = true
		return
	}
	a := answer{c: c, gen: gen, fig: fig, id: s.fl.completionID(rec.Seq), model: s.cfg.Model,
		created: time.Now().Unix(), fault: fault}
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
	model   string
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

// refuse sends a flavour's refusal and records it.
func (s *Server) refuse(w http.ResponseWriter, rec *RequestRecord, ref *refusal) {
	if ref.body == nil {
		s.fail(w, rec, ref.status, ref.msg)
		return
	}
	rec.Status, rec.Error = ref.status, ref.msg
	s.record(rec)
	s.writeJSON(w, ref.status, ref.body)
}

// writeFault answers with a failing fault: a JSON error, or an HTML page,
// with its Retry-After.
func (s *Server) writeFault(w http.ResponseWriter, rec *RequestRecord, f Fault) {
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
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
	if f.Status == http.StatusServiceUnavailable && s.fl.loads() {
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

// randomCompletionID is a chat-completion id of 32 random letters and
// digits, as llama.cpp and vLLM make them, but the same for the same
// request number seq.
func randomCompletionID(seq int) string {
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
		w.Header().Set("Content-Type", s.fl.jsonContentType())
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		if _, err := w.Write(body); err != nil {
			return 0, true
		}
		return len(a.gen.Tokens), false
	}
	w.Header().Set("Content-Type", s.fl.jsonContentType())
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

// completionBody is the flavour's non-streamed chat completion, with the
// figures the fault lets it report.
func (s *Server) completionBody(a answer) obj {
	fig, shown := a.fault.reported(a.fig)
	a.fig = fig
	body := s.fl.completionBody(a, s.messageObj(a.gen))
	if !shown {
		body = slices.DeleteFunc(body, func(f kv) bool { return f.k == "usage" || f.k == "timings" })
	}
	return body
}

// messageObj is the assistant message of a reply in the flavour's shape.
func (s *Server) messageObj(g generation) obj {
	var content any = g.Content
	if g.Content == "" && len(g.ToolCalls) > 0 {
		content = nil
	}
	msg := obj{{"role", "assistant"}, {"content", content}}
	if g.Reasoning != "" {
		msg = append(msg, kv{s.fl.reasoningKey(), g.Reasoning})
	}
	if len(g.ToolCalls) > 0 {
		calls := make([]any, len(g.ToolCalls))
		for i, tc := range g.ToolCalls {
			calls[i] = s.fl.toolCallObj(tc, obj{{"name", tc.Name}, {"arguments", tc.Arguments}})
		}
		msg = append(msg, kv{"tool_calls", calls})
	}
	return msg
}
