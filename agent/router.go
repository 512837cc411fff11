package agent

import (
	"context"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/transcript"
)

// modelAwake runs before each run's first request behind llama.cpp's
// router mode (engine.Discovery.Router), which puts a model to sleep
// after an idle time (--sleep-idle-seconds) and unloads one to make room
// for another (--models-max): either drops the model's KV cache, and the
// session's. The router's /v1/models tells the model's status; asleep or
// unloaded, the planner is told the cache is gone (CacheLost), so that it
// prices the next request as a whole prefill (folding first, while that
// prefill is paid anyway, where it would after a subagent) and does not
// read the restart at 0 as a lesson about the cache. A session that sent
// nothing yet has nothing to lose.
func (r *run) modelAwake(ctx context.Context) {
	s := r.s
	s.mu.Lock()
	router, sent := s.router, s.stats.Requests > 0
	s.mu.Unlock()
	if !router || !sent {
		return
	}
	status, err := engine.ModelStatus(ctx, s.slot.opts)
	if err != nil || !engine.CacheGone(status) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fold := s.cw.CacheLost()
	text := engine.RouterNote(s.slot.opts.Model, status)
	if fold {
		text += ": the next request folds, while its prefill is paid anyway"
	}
	s.note(transcript.KindEvent, text)
	r.report(Event{Kind: Activity, Text: text})
}
