package contextwin

import (
	"fmt"
	"slices"
)

// spillAbove is the size past which a command's, a search's or a page's
// output is worth a spill file the model can page through.
const spillAbove = 8000

// ShouldSpill reports whether a result of this payload and size should
// also be saved to a file the model can page through with its read tool
// (the agent writes the file and sets Payload.Spill).
func ShouldSpill(p Payload, chars int) bool {
	switch p.Kind {
	case Command, Search, Fetch:
		return chars > spillAbove
	}
	return false
}

// fit cuts the given new results so that the request's estimate comes to
// at most limit tokens. The room they share is what the rest of the
// request leaves, given by priority (allocate). A cut keeps the head and
// the tail, with a marker between them that says the result hit the
// context limit.
func (s *Planner) fit(results []int, limit int) []Cut {
	if len(results) == 0 || s.estimate() <= limit {
		return nil
	}
	need, alloc := s.allocate(results, limit)
	before := make(map[int]int, len(results)) // the content's length before the cut
	for _, i := range results {
		if alloc[i] < need[i] {
			e := &s.entries[i]
			before[i] = len(s.log[i].Content)
			s.cutTo(i, s.est.NewChars(alloc[i])-(e.size-len(s.log[i].Content)))
		}
	}
	s.trimOver(results, limit, before)
	return s.cutsOf(results, before)
}

// allocate shares the room limit leaves the given results, in tokens:
// every result keeps at least minCut bytes, and the room above that goes
// by priority — the result that defines the task, then the newest read,
// then the rest, small ones whole, the others splitting what remains. It
// returns what each result needs whole and what it is given.
func (s *Planner) allocate(results []int, limit int) (need, alloc map[int]int) {
	need = make(map[int]int, len(results))
	floor := make(map[int]int, len(results))
	total := 0
	for _, i := range results {
		e := &s.entries[i]
		need[i] = s.entryTokens(i)
		floor[i] = min(need[i], s.est.New(minCut+e.size-len(s.log[i].Content)))
		total += need[i]
	}
	room := limit - (s.estimate() - total)
	for _, i := range results {
		room -= floor[i]
	}
	room = max(room, 0)
	alloc = make(map[int]int, len(results))
	give := func(i int, share int) {
		a := min(need[i]-floor[i], share)
		alloc[i] = floor[i] + a
		room -= a
	}
	newestRead := -1
	for _, i := range results {
		if s.log[i].Payload.Kind == Read {
			newestRead = i
		}
	}
	turn := s.turnStart()
	for _, i := range results {
		if s.definesTask(i, turn) || i == s.task.payload {
			give(i, room)
		}
	}
	if _, done := alloc[newestRead]; newestRead >= 0 && !done {
		give(newestRead, room)
	}
	var rest []int
	for _, i := range results {
		if _, done := alloc[i]; !done {
			rest = append(rest, i)
		}
	}
	// Water-filling: the smallest take what they need while it is under
	// an equal share; the others split what is left.
	slices.SortStableFunc(rest, func(a, b int) int { return (need[a] - floor[a]) - (need[b] - floor[b]) })
	for k, i := range rest {
		give(i, room/(len(rest)-k))
	}
	return need, alloc
}

// trimOver takes what rounding left of the estimate over limit from the
// largest result that can still give, noting in before the length of a
// result's content before its first cut.
func (s *Planner) trimOver(results []int, limit int, before map[int]int) {
	for over := s.estimate() - limit; over > 0; over = s.estimate() - limit {
		big, bigLen := -1, minCut
		for _, i := range results {
			if n := contentLen(s, i); n > bigLen {
				big, bigLen = i, n
			}
		}
		if big < 0 {
			break
		}
		if _, ok := before[big]; !ok {
			before[big] = len(s.log[big].Content)
		}
		s.cutTo(big, bigLen-s.est.NewChars(over)-32)
		if contentLen(s, big) >= bigLen {
			break
		}
	}
}

// cutsOf reports the results that were cut, before giving each one's
// length before the cut.
func (s *Planner) cutsOf(results []int, before map[int]int) []Cut {
	var cuts []Cut
	for _, i := range results {
		if n, ok := before[i]; ok {
			p := s.log[i].Payload
			cuts = append(cuts, Cut{
				Index: i, From: n, To: len(s.entries[i].text),
				Spill: ShouldSpill(p, n), SpillPath: p.Spill,
				OverWindow: s.est.New(n) > s.Budget().Usable,
			})
		}
	}
	return cuts
}

// contentLen is the length of result i's content as it stands.
func contentLen(s *Planner, i int) int {
	e := &s.entries[i]
	if e.form == whole {
		return len(s.log[i].Content)
	}
	return len(e.text)
}

// cutTo cuts result i's content to about n bytes (never under minCut).
func (s *Planner) cutTo(i, n int) {
	e := &s.entries[i]
	e.form, e.text = cutToFit, cutMiddle(s.log[i].Content, max(n, minCut), s.log[i].Payload)
	s.change(i, true)
}

// cutMiddle keeps the head and the tail of s within n bytes, with a marker
// between them saying what was cut and how to see it.
func cutMiddle(s string, n int, p Payload) string {
	if len(s) <= n {
		return s
	}
	marker := func(cut int) string {
		how := "narrow the request (a line range, a tighter pattern, fewer lines of output) to see the rest"
		if p.Spill != "" {
			how = "the whole output is in " + p.Spill + ": read it in pages"
		}
		return fmt.Sprintf("\n\n[… %d bytes cut here: this result hit the context limit; %s.]\n\n", cut, how)
	}
	m := len(marker(len(s)))
	body := max(n-m, 0)
	head := headUpTo(s, body*3/5)
	tail := tailUpTo(s, body-len(head))
	return head + marker(len(s)-len(head)-len(tail)) + tail
}
