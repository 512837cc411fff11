package contextwin

import (
	"path"
	"strings"
)

// foldPreamble opens the recap message.
const foldPreamble = "[The conversation before this point was folded to stay inside the context window. " +
	"Nothing is lost: read files and run searches again for anything you need in full.]\n\n"

// groupStarts lists the entries in [from, to) that start a group: a user
// message, or an assistant message with the results after it. A fold
// boundary is always one of them, so no result is parted from its call.
func (s *Session) groupStarts(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		if s.log[i].Role != Tool {
			out = append(out, i)
		}
	}
	return out
}

// foldable reports whether a fold would fold anything: some group starts
// between the recap and the current round.
func (s *Session) foldable() bool {
	cur := s.currentStart()
	for i := s.foldedUpTo + 1; i < cur; i++ {
		if s.log[i].Role != Tool {
			return true
		}
	}
	return false
}

// entryTokens is entry i's share of the estimate as it stands.
func (s *Session) entryTokens(i int) int {
	e := &s.entries[i]
	return s.est.Known(e.size-e.fresh) + s.est.New(e.fresh)
}

// foldBoundary is where a fold would start keeping turns verbatim:
// walking back from the newest message, groups stay while they fit in the
// fold keeps — or less, when the prefix, the recap and the task carried
// verbatim leave less under the goal — and the current round always
// stays. A boundary at or before foldedUpTo folds nothing.
func (s *Session) foldBoundary(b Budget, goal int) int {
	cur := s.currentStart()
	starts := s.groupStarts(s.foldedUpTo, len(s.entries))
	verbatim := 0
	if t := s.turnStart(); t >= 0 && t < cur {
		verbatim += len(s.log[t].Content)
	}
	if p := s.taskPayload; p >= 0 && p < cur {
		verbatim += len(s.log[p].Content)
	}
	keeps := min(b.FoldKeeps, goal-s.prefixTokens()-b.Recap-s.est.Known(verbatim)-s.est.New(len(foldPreamble)+256))
	boundary, keep := len(s.entries), 0
	for g := len(starts) - 1; g >= 0; g-- {
		st, end := starts[g], len(s.entries)
		if g+1 < len(starts) {
			end = starts[g+1]
		}
		t := 0
		for i := st; i < end; i++ {
			t += s.entryTokens(i)
		}
		if st < cur && keep+t > keeps {
			break
		}
		keep += t
		boundary = st
	}
	return boundary
}

// fold folds the oldest turns into one recap: walking back from the
// newest message, groups stay verbatim while they fit in the fold keeps
// (the current round always stays); everything older becomes the recap,
// which replaces the previous one. It returns how many messages it folded
// and the recap message's size.
func (s *Session) fold(b Budget, goal int) (folded, recapChars int) {
	boundary := s.foldBoundary(b, goal)
	if boundary <= s.foldedUpTo {
		return 0, 0
	}

	r := BuildRecap(RecapInput{Note: s.note, Previous: s.recap, Folded: s.log[s.foldedUpTo:boundary], Budget: s.est.NewChars(b.Recap)})

	var text strings.Builder
	text.WriteString(foldPreamble)
	text.WriteString(r.Text)
	// The task survives: the request that opened the turn, and the payload
	// that defined it, travel verbatim inside the recap. Their bytes were
	// carried before, so they are not priced as new.
	verbatim := 0
	if t := s.turnStart(); t >= 0 && t < boundary {
		text.WriteString("\n\nThe task, verbatim:\n")
		text.WriteString(s.log[t].Content)
		verbatim += len(s.log[t].Content)
	}
	if p := s.taskPayload; p >= 0 && p < boundary {
		text.WriteString("\n\nThe payload that defines the task (" + describe(s.log, p) + "), verbatim:\n")
		text.WriteString(s.log[p].Content)
		verbatim += len(s.log[p].Content)
	}

	s.recap = &r
	s.recapMsg = Message{Role: User, Content: text.String()}
	s.recapVerbatim = verbatim
	folded = boundary - s.foldedUpTo
	s.foldedUpTo = boundary
	s.rebuild()
	return folded, text.Len()
}

// electTaskPayload picks, once per turn, the result that defines the task:
// one the agent marked, else the first result of the turn about a file or
// page the user's request names. It is never shed, and a fold carries it
// verbatim.
func (s *Session) electTaskPayload() {
	turn := s.turnStart()
	if turn == s.taskTurn {
		return
	}
	s.taskTurn, s.taskPayload = turn, -1
	if turn < 0 {
		return
	}
	for i := turn + 1; i < len(s.entries); i++ {
		if m := s.log[i]; m.Role == Tool && m.Payload.Task {
			s.taskPayload = i
			return
		}
	}
	for i := turn + 1; i < len(s.entries); i++ {
		if s.definesTask(i, turn) {
			s.taskPayload = i
			return
		}
	}
}

// definesTask reports whether result i is about a file or page that the
// user message at turn names.
func (s *Session) definesTask(i, turn int) bool {
	m := s.log[i]
	if m.Role != Tool || turn < 0 {
		return false
	}
	if m.Payload.Task {
		return true
	}
	p := m.Payload.Path
	if (m.Payload.Kind != Read && m.Payload.Kind != Fetch) || len(p) < 4 {
		return false
	}
	request := s.log[turn].Content
	if strings.Contains(request, p) {
		return true
	}
	base := path.Base(p)
	return len(base) >= 4 && strings.Contains(request, base)
}
