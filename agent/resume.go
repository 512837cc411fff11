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
	driven, messages, early, diverged := false, 0, 0, 0
	divergedAt := ""
	var last *contextwin.Plan // the plan of the last request sent
	for i, r := range recs {
		switch r.Kind {
		case transcript.KindSlot:
			if r.Slot != nil {
				s.resumedSlot = r.Slot
				if r.Slot.File != "" {
					s.resumedSave = r.Slot
				}
			}
			continue
		case transcript.KindMessage:
			if r.Message != nil {
				s.cw.Append(fromTranscript(*r.Message))
				messages++
				if !driven {
					early++
				}
			}
			continue
		case transcript.KindPrefix:
			if r.Prefix == nil {
				continue
			}
			var tools []engine.Tool
			if err := json.Unmarshal(r.Prefix.Tools, &tools); err != nil {
				continue
			}
			driven = true
			s.prefix = &Prefix{System: r.Prefix.System, Tools: tools, Chars: r.Prefix.Chars, Map: r.Prefix.Map}
			s.cw.SetPrefixChars(r.Prefix.Chars)
			continue
		}
		if !driven {
			// What drove an earlier process's planner means nothing to
			// one that was handed the messages alone.
			continue
		}
		switch r.Kind {
		case transcript.KindPlan:
			p := s.cw.Plan()
			if p.Event.String() != r.Text && diverged == 0 {
				diverged++
				divergedAt = fmt.Sprintf("record %d planned %s, the replay %s", i+1, r.Text, p.Event)
			}
			last = &p
		case transcript.KindNote:
			s.cw.SetNote(r.Text)
		case transcript.KindAbandon:
			s.cw.AbandonNote()
		case transcript.KindCompact:
			s.cw.Compact()
		case transcript.KindOverflow:
			if r.Overflow != nil {
				p := s.cw.Overflow(r.Overflow.PromptTokens, r.Overflow.Window)
				last = &p
			}
		case transcript.KindRecapEdit:
			s.cw.EditRecap(r.Text)
		case transcript.KindMapUpdate:
			s.replayMaps = append(s.replayMaps, r.Text) // for the fold of the next plan
		case transcript.KindWarmup:
			if u := r.Usage; u != nil {
				s.cw.ObservePrefix(len(warmupMessage)+warmupOverhead, u.PromptTokens)
			}
		case transcript.KindUsage:
			if u := r.Usage; u != nil {
				s.cw.Observe(contextwin.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, FinishReason: u.FinishReason})
			}
		}
	}
	if driven && last != nil && s.prefix != nil {
		// The request sent last, as it was sent: the warm-up sends it
		// again, and a saved cache is restored only for it.
		req := s.prefix.Request(last.Messages, last.MaxTokens, "")
		s.resumeReq = &req
		s.prev, _ = promptBytes(req)
	}
	switch {
	case !driven:
		return fmt.Sprintf("resumed %d messages from a transcript that does not record how they were sent, shed or folded: "+
			"they all count as unsent (best effort), and the next request rebuilds the prefix", messages)
	case diverged > 0:
		return fmt.Sprintf("resumed %d messages, replaying how they were sent, shed and folded; the replay differs from the recording (%s): planning goes on from the replay", messages, divergedAt)
	case early > 0:
		return fmt.Sprintf("resumed %d messages, replaying how they were sent, shed and folded (the first %d from an older transcript, best effort)", messages, early)
	}
	return fmt.Sprintf("resumed %d messages, replaying how they were sent, shed and folded: the next request continues the last one", messages)
}
