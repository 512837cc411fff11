package agent

import (
	"encoding/json"
	"fmt"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/transcript"
	"github.com/reika-lsp/reika/contextwin"
)

// replay brings a transcript back into the session. contextwin is
// deterministic, so a session that recorded every call it made on its
// planner — the fixed prefix, each message, plan, note, usage, overflow,
// compaction and recap edit, in order — is rebuilt by making the same
// calls again: what was sent, shed and folded before is known as such,
// the prefix is the one the requests carried (not rebuilt: the repo map
// may have changed since), and the next request is the last one plus
// what is new, byte for byte.
//
// A transcript written before these records (or the part of one before
// its first prefix record) has only its messages: they are appended as
// they are, all unsent, which is the best that can be done. It returns a
// line for the log that says which it was.
func (s *Session) replay(recs []transcript.Record) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replaying = true
	defer func() { s.replaying, s.replayMaps = false, nil }()
	rp := &replayer{s: s}
	for i, r := range recs {
		if !rp.takeState(r) && rp.driven {
			rp.drive(i, r)
		}
	}
	if n := len(s.replayPrefixes); n > 0 {
		// A prefix no fold of the replay took (it planned otherwise
		// than the recording): the requests carried it.
		s.prefix = s.replayPrefixes[n-1]
		s.cw.SetPrefixChars(s.prefix.Chars)
		s.replayPrefixes = nil
	}
	if rp.driven && rp.last != nil && s.prefix != nil {
		// The request sent last, as it was sent: the warm-up sends it
		// again, and a saved cache is restored only for it.
		req := s.prefix.Request(rp.last.Messages, rp.last.MaxTokens, "")
		s.resumeReq = &req
		s.prev, _ = promptBytes(req)
		s.debug.prev = s.prev
	}
	return rp.outcome()
}

// replayer is the state of one replay.
type replayer struct {
	s *Session
	// driven is set from the first prefix record on: the records after
	// it drove this transcript's planner.
	driven          bool
	messages, early int
	// divergedAt says where the replay first planned otherwise than the
	// recording; "" while it has not.
	divergedAt string
	last       *contextwin.Plan // the plan of the last request sent
}

// takeState takes in a record that holds state — the slot, a message, the
// prefix — and reports whether it was one. These count wherever they are;
// the others only once the planner is driven.
func (rp *replayer) takeState(r transcript.Record) bool {
	s := rp.s
	switch r.Kind {
	case transcript.KindMode:
		s.mode = r.Text
	case transcript.KindModel:
		s.model = r.Text
		if r.Model != nil {
			s.cw.SetModel(r.Model.Window, r.Model.OutputLimit, r.Model.CacheModel())
		}
		if rp.driven {
			s.cw.ModelChanged() // as SetModel did, a prefix being set
		}
	case transcript.KindSlot:
		if r.Slot != nil {
			s.resumedSlot = r.Slot
			if r.Slot.File != "" {
				s.resumedSave = r.Slot
			}
		}
	case transcript.KindMessage:
		if r.Message != nil {
			s.cw.Append(fromTranscript(*r.Message))
			rp.messages++
			if !rp.driven {
				rp.early++
			}
		}
	case transcript.KindPrefix:
		if r.Prefix == nil {
			return true
		}
		var tools []engine.Tool
		if err := json.Unmarshal(r.Prefix.Tools, &tools); err != nil {
			return true
		}
		p := &Prefix{System: r.Prefix.System, Tools: tools, Chars: r.Prefix.Chars, Map: r.Prefix.Map}
		if rp.driven {
			// A later prefix is one a fold put in front of its request
			// (prefixAtFold): the replay's fold takes it.
			s.replayPrefixes = append(s.replayPrefixes, p)
			return true
		}
		rp.driven = true
		s.prefix = p
		s.cw.SetPrefixChars(r.Prefix.Chars)
	default:
		return false
	}
	return true
}

// drive makes the planner call the i-th record recorded.
func (rp *replayer) drive(i int, r transcript.Record) {
	cw := rp.s.cw
	switch r.Kind {
	case transcript.KindPlan:
		p := cw.Plan()
		rp.comparePlan(i, r, p.Event)
		rp.last = &p
	case transcript.KindNote:
		cw.SetNote(r.Text)
	case transcript.KindAbandon:
		cw.AbandonNote()
	case transcript.KindCompact:
		cw.Compact()
	case transcript.KindOverflow:
		if r.Overflow != nil {
			p := cw.Overflow(r.Overflow.PromptTokens, r.Overflow.Window)
			rp.last = &p
		}
	case transcript.KindRecapEdit:
		cw.EditRecap(r.Text)
	case transcript.KindMapUpdate:
		rp.s.replayMaps = append(rp.s.replayMaps, r.Text) // for the fold of the next plan
	case transcript.KindWarmup:
		if u := r.Usage; u != nil {
			cu := contextwin.Usage{PromptTokens: u.PromptTokens, Cached: u.CachedTokens, CachedKnown: u.CachedKnown}
			if u.PrimerTokens > 0 {
				cw.ObservePrimer(warmupOverhead, u.PrimerTokens, cu)
			} else {
				cw.ObservePrefix(len(warmupMessage)+warmupOverhead, cu)
			}
		}
	case transcript.KindCheckpoint:
		if u := r.Usage; u != nil {
			cw.ObserveCheckpoint(contextwin.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens,
				Cached: u.CachedTokens, CachedKnown: u.CachedKnown})
		}
	case transcript.KindUsage:
		if u := r.Usage; u != nil {
			cw.Observe(contextwin.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, FinishReason: u.FinishReason,
				Cached: u.CachedTokens, CachedKnown: u.CachedKnown})
		}
	}
}

// comparePlan notes the first plan record whose event the replay did not
// plan.
func (rp *replayer) comparePlan(i int, r transcript.Record, got contextwin.Event) {
	if rp.divergedAt != "" {
		return
	}
	want, err := r.PlanEvent()
	switch {
	case err != nil:
		rp.divergedAt = fmt.Sprintf("record %d planned what this version does not know (%v), the replay %s", i+1, err, got)
	case want != got:
		rp.divergedAt = fmt.Sprintf("record %d planned %s, the replay %s", i+1, want, got)
	}
}

// outcome is the line for the log that says how the transcript resumed.
func (rp *replayer) outcome() string {
	switch {
	case !rp.driven:
		return fmt.Sprintf("resumed %d messages from a transcript that does not record how they were sent, shed or folded: "+
			"they all count as unsent (best effort), and the next request rebuilds the prefix", rp.messages)
	case rp.divergedAt != "":
		return fmt.Sprintf("resumed %d messages, replaying how they were sent, shed and folded; the replay differs from the recording (%s): planning goes on from the replay", rp.messages, rp.divergedAt)
	case rp.early > 0:
		return fmt.Sprintf("resumed %d messages, replaying how they were sent, shed and folded (the first %d from an older transcript, best effort)", rp.messages, rp.early)
	}
	return fmt.Sprintf("resumed %d messages, replaying how they were sent, shed and folded: the next request continues the last one", rp.messages)
}
