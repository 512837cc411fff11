package contextwin

import (
	"fmt"
	"strings"
)

// ReasoningTemplate is what the engine's chat template renders of the
// reasoning that assistant messages carry back (reasoning_content). It
// decides what the requests carry of a thinking model's reasoning, and so
// what the budget counts of it: a request carries exactly the reasoning the
// template would render of it, so that the view's size is the prompt's.
type ReasoningTemplate string

const (
	// ReasoningUnknown is a template nobody described: every message
	// carries its reasoning back until a shed drops it, and it is counted.
	ReasoningUnknown ReasoningTemplate = ""
	// ReasoningDrop renders none (templates that strip earlier <think>
	// blocks): no request carries reasoning, none is counted. Each reply
	// is prefilled again from its text on the next request, as the
	// template renders it without the reasoning the engine generated.
	ReasoningDrop ReasoningTemplate = "drop"
	// ReasoningTurn renders the reasoning of the assistant messages after
	// the last user message (Qwen3's, DeepSeek's): a user message drops
	// the turn's reasoning from the prompt, and the engine prefills the
	// turn again after it. The requests carry a turn's reasoning from its
	// carryRounds-th reply on. So what would be a user message after a tool
	// result rides at the end of that result instead — what the user says
	// while the agent works (RidesResult), the note round's question
	// (askNote), the middle recap (midRides) — and the requests carry the
	// reasoning of the messages after the last user message that does not
	// ride: an ask after an answer drops the turn's, as the template does.
	ReasoningTurn ReasoningTemplate = "turn"
	// ReasoningAll renders every assistant message's reasoning (preserved
	// thinking: llama.cpp's supports_preserve_reasoning, a template with
	// preserve_thinking): every message carries it until a shed drops it,
	// and it is counted.
	ReasoningAll ReasoningTemplate = "all"
)

// ParseReasoningTemplate reads a template class: "", "none" or "drop",
// "turn", "all" (or "preserve").
func ParseReasoningTemplate(s string) (ReasoningTemplate, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return ReasoningUnknown, nil
	case "none", "drop":
		return ReasoningDrop, nil
	case "turn", "current", "current-turn":
		return ReasoningTurn, nil
	case "all", "preserve":
		return ReasoningAll, nil
	}
	return ReasoningUnknown, fmt.Errorf("unknown reasoning template %q: want drop, turn or all", s)
}

// carryRounds is the reply of a turn from which a turn template's
// requests carry its reasoning back. The template drops a turn's
// reasoning at the next ask, and the engine prefills again everything
// after the first reply that carried it; a reply sent without it costs
// only its own text again. So a short exchange (a question, a few
// reads, an answer) carries none: it would pay its whole turn at the
// next ask for reasoning it no longer needs. A long agentic turn carries
// it from its eighth reply on, as the template means it to. Measured on
// the replay's 24-ask chat with pastes, turn template: 1.71 / 1.84 / 1.88
// of its growth at 16k / 32k / 128k carrying from the first reply,
// 1.46 / 1.36 / 1.17 from the eighth; the one-turn sessions the same.
const carryRounds = 8

// carriesReasoning reports whether the requests carry entry i's
// reasoning back: what the template renders of it.
func (s *Planner) carriesReasoning(i int) bool {
	switch s.cfg.Reasoning {
	case ReasoningDrop:
		return false
	case ReasoningTurn:
		return i > s.lastQuery && s.carryFrom >= 0 && i >= s.carryFrom && (i >= s.fold.midTo || s.fold.mid.msg.Rides)
	}
	return true
}

// RidesResult reports whether user message m, appended after log, is
// sent inside the tool result before it on a turn template: what the user
// says while the agent works (a tool result is the last message) goes at
// the end of that result, so that the template, which renders reasoning
// after the last user message, does not drop the turn's reasoning and the
// engine does not prefill the turn again for it (Qwen3's template does not
// count a tool response sent as a user message as a query either). The
// planner keeps it a user message of its own: the recap carries it word
// for word.
func RidesResult(log []Message, m Message) bool {
	return m.Role == User && !m.Continuation && len(log) > 0 && log[len(log)-1].Role == Tool
}

// midRides reports whether the middle recap, placed after the view's
// last item, rides it: on a turn template, after a tool result, as a user
// message said there does, so that the turns before it keep their
// reasoning in the prompt and the engine restarts at the recap.
func (s *Planner) midRides() bool {
	n := s.view.Len()
	return s.cfg.Reasoning == ReasoningTurn && n > 0 && s.view.items[n-1].msg.Role == Tool
}

// RiddenText is a tool result's text with what the user said after it.
func RiddenText(result, said string) string {
	return result + "\n\n[The user says, while you work:]\n" + said
}

// dropTurnReasoning re-renders the entries of the view that carry
// reasoning the template no longer renders: on a turn template, those
// before a user message that arrived, or before a middle recap. The
// request changes there, as the prompt the engine renders does.
func (s *Planner) dropTurnReasoning() {
	if s.cfg.Reasoning != ReasoningTurn {
		return
	}
	for k := s.view.Len() - 1; k >= 0; k-- {
		it := &s.view.items[k]
		if it.of >= 0 && it.msg.Reasoning != "" && !s.carriesReasoning(it.of) {
			s.change(it.of, true) // see shedReasoningAfterChange
		}
	}
}

// askNote appends the note round's question q to msgs. On a turn
// template a user message would drop the turn's reasoning and the engine
// would prefill the whole turn again for the note; there the question
// rides at the end of the newest message when it is a tool result or the
// user's (itself riding the result before it, or a query already), which
// no request has carried yet, so the note request is the last request
// and that message, then the question.
func (s *Planner) askNote(msgs []Message, q Message) []Message {
	if s.noteRides(msgs) {
		n := len(msgs)
		last := msgs[n-1]
		last.Content += "\n\n" + q.Content
		return append(msgs[:n-1:n-1], last)
	}
	return append(msgs, q)
}

// noteRides reports whether the note's question rides at the end of the
// last of msgs (askNote) rather than go as a message of its own.
func (s *Planner) noteRides(msgs []Message) bool {
	n := len(msgs)
	return s.cfg.Reasoning == ReasoningTurn && n > 0 && (msgs[n-1].Role == Tool || msgs[n-1].Role == User)
}

// shedReasoningAfterChange sheds the reasoning of every message after the
// first one a shrink event changed in the request (compared with the last
// request sent): the engine prefills all of it again anyway, so dropping
// its reasoning costs nothing and gives its room back. On a turn template
// it is also reasoning a later user message would make the engine prefill
// again.
//
// Only on a template of known class: on one nobody described the
// reasoning stays until a shed drops it, as it always has.
func (s *Planner) shedReasoningAfterChange() {
	if s.cfg.Reasoning == ReasoningUnknown {
		return
	}
	sent := s.cache.sent
	for k := range s.view.Len() {
		it := &s.view.items[k]
		if k < len(sent) && sameMessage(it.msg, sent[k]) {
			continue
		}
		for ; k < s.view.Len(); k++ {
			it := &s.view.items[k]
			if it.of >= 0 && it.msg.Reasoning != "" {
				// Its text counts as new, priced as bytes no request
				// carried: the engine prefills it again, and the ratio
				// learnt from requests that held the reasoning (prose,
				// fewer tokens a byte than code) undercounts it.
				s.entries[it.of].reasoningShed = true
				s.change(it.of, true)
			}
		}
		return
	}
}

// reasoningBytes is what reasoning counts in a message's size: its bytes
// weighed as the tokens it takes against the code and logs results hold.
// It is prose, sparser in tokens (about 4.3 bytes a token where code
// takes 3; the simulator's 3.65 against 2.53), and a ratio learnt from
// requests that carried it would undercount the ones after a user message
// or a shrink event dropped it: on vLLM, whose max_tokens must fit the
// window with the prompt, by more than the margin.
func reasoningBytes(r string) int { return len(r) * 7 / 10 }

// noteRoom is the room, in tokens, a note round needs: noteReply for the
// note, and for a model that thinks the reasoning it writes first, as long
// as the longest of its last three (a note cut at its max_tokens loses what
// it had not written yet).
func (s *Planner) noteRoom() int {
	longest := 0
	for i, seen := len(s.log)-1, 0; i >= 0 && seen < 3; i-- {
		if s.log[i].Role == Assistant {
			longest = max(longest, len(s.log[i].Reasoning))
			seen++
		}
	}
	return noteReply + s.est.Known(longest)
}

// primerAfter is the primer a checkpoint request puts after msgs: on a
// turn template it rides the tool result msgs end with, as a user message
// there does, or the template would drop the turn's reasoning from the
// checkpoint request's prompt and the engine prefill the turn again for
// it.
func (s *Planner) primerAfter(msgs []Message) Message {
	m := s.primer()
	n := len(msgs)
	m.Rides = s.cfg.Reasoning == ReasoningTurn && n > 0 && msgs[n-1].Role == Tool
	return m
}
