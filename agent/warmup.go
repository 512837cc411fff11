package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/transcript"
	"github.com/reika-lsp/reika/contextwin"
)

// warmupMessage is the user turn of the warm-up request: chat templates
// want one, and it is short enough to cost nothing.
const warmupMessage = "."

// warmupWaitMax bounds how long a run waits for a warm-up that is already
// at the engine: past it, the warm-up is cancelled. The warm-up prefills
// the prefix the run needs anyway, so waiting for it costs little.
var warmupWaitMax = 30 * time.Second

// warmup is a warm-up in flight.
type warmup struct {
	cancel context.CancelFunc
	sent   bool          // the request is on its way to the engine
	done   chan struct{} // closed when it ended
}

// Warmup prefills the fixed prefix: one request with max_tokens 1, so
// that the user's first ask pays only for itself. A resumed session sends
// instead the request it sent last, rebuilt from the transcript byte for
// byte: the engine still holds it, or restored it from a saved slot, and
// finds it cached — a new prefix would evict it from a one-slot engine.
// It is synchronous; the caller runs it in the background and may cancel
// it. It never touches the conversation, and never overlaps another
// request of the session: it is skipped once a run, a compaction or
// another warm-up has started, and a run or compaction that starts
// meanwhile waits for it (see awaitWarmup).
func (s *Session) Warmup(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &warmup{cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	resumed := s.resumeReq != nil
	skip := s.running.Load() || s.warm != nil || s.stats.Requests > 0 || (s.cw.Len() > 0 && !resumed)
	if !skip {
		s.warm = w
	}
	s.mu.Unlock()
	if skip {
		return nil
	}
	defer func() {
		s.mu.Lock()
		s.warm = nil
		s.mu.Unlock()
		close(w.done)
	}()
	s.confirmSlot(ctx)
	var req engine.Request
	primed := 0 // the primer's tokens, when the warm-up is one
	if resumed {
		// The request sent last before the restart, byte for byte: the
		// engine still holds it (or restored it), and a new prefix would
		// evict it from a one-slot engine.
		req = *s.resumeReq
		req.MaxTokens = 1
	} else {
		msg := contextwin.Message{Role: contextwin.User, Content: warmupMessage}
		s.mu.Lock()
		if m, n, ok := s.cw.Primer(); ok {
			// The warm-up is the primer: its checkpoint, the slot's
			// first, stands just before the first message's text.
			msg, primed = m, n
		}
		s.mu.Unlock()
		req = s.Prefix().Request([]contextwin.Message{msg}, 1, "")
	}
	req.Temperature = s.cfg.Temperature
	req.Slot = s.slotRef()
	req.Session = s.sessionKey()
	req.Model = s.modelName()
	s.mu.Lock()
	if ctx.Err() == nil {
		w.sent = true
	}
	s.mu.Unlock()
	if !w.sent {
		return nil // a run came first: it sends the prefix itself
	}
	resp, err := s.cfg.Engine.Chat(ctx, req, func(engine.Delta) {})
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Requests++
	if err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	if line := s.debugLine("warm-up", req, resp); line != "" {
		s.debug.pending = append(s.debug.pending, line)
	}
	s.tally(resp)
	if resumed {
		return nil // the planner learnt this request's count when it was first sent
	}
	// The engine's own count teaches the estimate what the prefix costs
	// before the first real request is planned.
	cached, known := cacheFigure(resp)
	u := contextwin.Usage{PromptTokens: resp.Usage.PromptTokens, Cached: cached, CachedKnown: known}
	var estimate int // the request built it
	var fig contextwin.Figure
	if primed > 0 {
		estimate = s.cw.Estimator().Known(s.prefix.Chars+warmupOverhead) + primed
		fig = s.cw.ObservePrimer(warmupOverhead, primed, u)
	} else {
		estimate = s.cw.Estimator().Known(s.prefix.Chars + len(warmupMessage) + warmupOverhead)
		fig = s.cw.ObservePrefix(len(warmupMessage)+warmupOverhead, u)
	}
	if text := s.figureNotice(fig, resp.Usage.PromptTokens, estimate); text != "" {
		s.figures.pending = append(s.figures.pending, text)
	}
	s.drove(transcript.Record{Kind: transcript.KindWarmup, Usage: &transcript.Usage{PromptTokens: resp.Usage.PromptTokens, CachedTokens: cached, CachedKnown: known, PrimerTokens: primed}})
	return nil
}

// countPrimer asks the engine to count the primer's parts (two /tokenize
// calls), which size it (contextwin.Planner.CountPrimer), when the
// planner wants one: on an engine that restarts from checkpoints the
// session's first request is a user message just short of a
// micro-batch, so that the slot's first checkpoint — the one a full slot
// keeps longest — stands just before the first message's text, where
// every fold of the front changes the request. Without the engine's
// counts it is sized as the common tokenizers count, which a tokenizer
// that splits more overshoots: then the first request restarts from 0.
func (s *Session) countPrimer(ctx context.Context, opts engine.Options) {
	s.mu.Lock()
	want := s.cw.WantsPrimer()
	s.mu.Unlock()
	if !want {
		return
	}
	head, err := engine.Tokenize(ctx, opts, contextwin.PrimerText)
	if err != nil {
		return
	}
	words, err := engine.Tokenize(ctx, opts, contextwin.PrimerWords)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cw.CountPrimer(head, words)
}

// warmupOverhead is what a chat template adds around the warm-up's one
// message, in bytes.
const warmupOverhead = 16

// awaitWarmup is called by a run or a compaction that holds the running
// flag, before its first request: a warm-up not yet sent is cancelled, one
// at the engine is waited for (at most warmupWaitMax, then cancelled and
// waited for), so that the session never has two requests at the engine.
func (s *Session) awaitWarmup(ctx context.Context) {
	s.mu.Lock()
	w := s.warm
	if w != nil && !w.sent {
		w.cancel()
	}
	s.mu.Unlock()
	if w == nil {
		return
	}
	t := time.NewTimer(warmupWaitMax)
	defer t.Stop()
	select {
	case <-w.done:
		return
	case <-t.C:
	case <-ctx.Done():
	}
	w.cancel()
	<-w.done
}
