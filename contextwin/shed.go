package contextwin

// Shedding. A shed replaces old tool results by their summaries and drops
// spent continuations and old reasoning, cheapest to lose first, until the
// request is under its goal; shrink (plan.go) decides how far to go and
// whether a fold must follow. A candidate can be priced (afterShed)
// without touching the view before it is shed (applyShed), so a plan
// knows whether shedding alone will do before it sheds anything.
//
// Which results a shed takes is the cost rule's (price.go): the request
// changes at the first item shed and is prefilled again from there, so a
// shed of the newest results before the current round re-prefills least.
// Sheds of the oldest candidates first (every one from the recap up to
// each item), in their place or offered beside them, prefilled more on
// the replay at 16k (+0.01 to +0.04 of growth a row; at 32k −0.01 to
// +0.02): the newest go first, for that measured reason. The current round's results are never shed, so the latest
// output stays readable whatever is taken.

// largePayload results, in bytes, go first: shedding a small file makes
// the model read it again, which pulls the next event forward.
const largePayload = 2000

// shedCandidate is one thing a shed can drop.
type shedCandidate struct {
	index int
	what  shedWhat
}

type shedWhat uint8

const (
	shedReasoning shedWhat = iota
	shedContinuation
	shedPayload
)

// shedCandidates lists, in the order they go, what a shed may drop:
// spent continuations and old reasoning first (the model cannot fetch its
// own reasoning again, so dropping it provokes no re-read), then results
// of 2000 bytes or more, oldest first, then smaller ones. Never the current
// round, never the task payload, never a result too small to be worth its
// summary.
func (s *Planner) shedCandidates() []shedCandidate {
	cur := s.currentStart()
	var first, large, small []shedCandidate
	for _, it := range s.view.items {
		i := it.of
		if i < 0 || i >= cur {
			continue
		}
		e := &s.entries[i]
		switch {
		case s.log[i].Continuation && e.form != continuationShed:
			first = append(first, shedCandidate{i, shedContinuation})
		case s.log[i].Role == Assistant && s.log[i].Reasoning != "" && !e.reasoningShed && !(s.fold.split && i == s.fold.lead) && s.carriesReasoning(i):
			// (The message a two-message recap's rest leads carries none.)
			first = append(first, shedCandidate{i, shedReasoning})
		case s.log[i].Role == Tool && e.form != summarized && i != s.task.payload && !s.log[i].Payload.Task:
			// Whether a result is worth its summary is asked only when a
			// shed reaches it; the tiny ones need not even ask.
			if len(s.log[i].Content) < keepBelow {
				continue
			}
			if len(s.log[i].Content) >= largePayload {
				large = append(large, shedCandidate{i, shedPayload})
			} else {
				small = append(small, shedCandidate{i, shedPayload})
			}
		}
	}
	return append(append(first, large...), small...)
}

// afterShed is the view's size and fresh bytes once c is shed, without
// shedding it.
func (s *Planner) afterShed(c shedCandidate, size, fresh int) (int, int) {
	e := &s.entries[c.index]
	m := s.render(c.index)
	contentNew := true
	switch c.what {
	case shedReasoning:
		m.Reasoning, contentNew = "", false
	case shedContinuation:
		m.Content = continuationText
	case shedPayload:
		sum, keep := s.summarize(c.index)
		if keep {
			return size, fresh
		}
		m.Content = e.lead + sum + e.notice
	}
	n := sizeOf(m)
	f := freshAfter(e.size, e.fresh, n, len(m.Content), contentNew)
	return size + n - e.size, fresh + f - e.fresh
}

// continuationText replaces a spent continuation.
const continuationText = "[a partial reply, continued in the next message]"

// applyShed sheds c.
func (s *Planner) applyShed(c shedCandidate) Removed {
	e := &s.entries[c.index]
	before := e.size
	sh := Removed{Index: c.index}
	contentNew := true
	switch c.what {
	case shedReasoning:
		e.reasoningShed, contentNew = true, false
		sh.What = "reasoning"
	case shedContinuation:
		e.form, e.text = continuationShed, continuationText
		sh.What = "a partial reply"
	case shedPayload:
		sum, _ := s.summarize(c.index)
		e.form, e.text = summarized, sum
		sh.What = describe(s.log, c.index)
	}
	s.change(c.index, contentNew)
	sh.Chars = before - e.size
	return sh
}
