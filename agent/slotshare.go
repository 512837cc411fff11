package agent

import (
	"context"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/transcript"
)

// Sessions beyond llama.cpp's slots (--parallel N) share them: each pins
// the least recently used (engine.ChooseSlot), and evicts the session
// that used it last. llama.cpp numbers its tasks in order and /slots
// shows each slot's last one, so a session that read its slot's task
// after its run (markSlot) sees before its next run whether another took
// the slot over meanwhile (slotTakenOver).

// markSlot records the last task on the session's pinned slot, its own
// last request's, after a run.
func (s *Session) markSlot(ctx context.Context) {
	s.mu.Lock()
	pin, id, opts := s.slot.pin, s.slot.id, s.slot.opts
	s.mu.Unlock()
	if !pin {
		return
	}
	slots, err := engine.Slots(ctx, opts)
	if err != nil {
		return
	}
	if i := slotIndexOf(slots, id); i >= 0 {
		s.mu.Lock()
		s.slot.lastTask = slots[i].Task
		s.mu.Unlock()
	}
}

// slotTakenOver runs before a run's first request: where another task ran
// on the session's slot since its last run, another session took it over.
// llama-server may have kept the session's prompt in host memory
// (--cache-ram) and take it back; as after a subagent that shared the
// slot (sharedSlot), the session's next request shows which, and once
// one showed a loss the planner is told the cache is gone (CacheLost),
// which folds a request past half the usable room while its prefill is
// paid anyway.
func (r *run) slotTakenOver(ctx context.Context) {
	s := r.s
	s.mu.Lock()
	last, id, opts := s.slot.lastTask, s.slot.id, s.slot.opts
	s.mu.Unlock()
	if last == 0 {
		return
	}
	slots, err := engine.Slots(ctx, opts)
	if err != nil {
		return
	}
	i := slotIndexOf(slots, id)
	if i < 0 || slots[i].Task == last {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slot.lastTask = 0
	text := "another session used this session's engine slot since its last run"
	if !s.slotLoses {
		s.watchSlot = s.stats.LastPrompt
		text += ": the next request shows whether llama-server kept this session's prompt (--cache-ram)"
	} else if s.cw.CacheLost() {
		text += ", and llama-server keeps no copy of the displaced prompt: the next request folds, while its prefill is paid anyway"
	} else {
		text += ", and llama-server keeps no copy of the displaced prompt: the next request prefills it whole"
	}
	s.note(transcript.KindEvent, text)
	r.report(Event{Kind: Activity, Text: text})
}
