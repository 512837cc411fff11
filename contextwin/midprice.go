package contextwin

import (
	"sort"
	"strings"
)

// Pricing folds into the middle recap: where a new one may start (by the
// share it aims for, just after a checkpoint a full slot keeps, or after a
// reset), what rewriting one in place keeps, and what each option costs
// at the folds to come.

// startHow is how a new middle recap's start is chosen.
type startHow int

const (
	// byShare: the fewest older turns that keep the request at the share
	// a middle recap aims for.
	byShare startHow = iota
	// anchored: each of the starts just after a checkpoint a full slot
	// keeps (anchoredStarts), down to the live floor (anchoredOptions).
	anchored
	// reset: the fewest older turns that keep the request live, the
	// engine's cache started over (option.reset).
	reset
)

// hows are the ways a fold into the middle recap chooses its start: with
// a middle recap already, the one it has; on an engine that restarts
// from checkpoints, also anchored, and reset where it may.
func (m *midTables) hows() []startHow {
	switch {
	case m.anchored == nil:
		return []startHow{byShare}
	case m.reset:
		return []startHow{byShare, anchored, reset}
	}
	return []startHow{byShare, anchored}
}

// midRewrites prices folds that rewrite the middle recap in place: the
// turns it stands for and those after it up to each boundary go into a
// new one, of rewriteRoom, that stands where it stood. The request
// changes at its start, after the older turns, which stay as they were
// sent (on an engine that restarts from checkpoints, one stands there:
// anchoredStarts). So a recap that is full, or that an appended part
// would re-prefill whole anyway, is renewed at the size a rewrite keeps,
// without a fold of the front, which would re-prefill the older turns
// too: at 128k on the replay that was 20–26k tokens a fold of the front,
// where a rewrite costs about 1k. Where the rewrite in place would leave
// less than the gap, it may start earlier instead, at the nearest of the
// older turns' starts that leaves it (earlierStarts): on fresh sessions
// at 32k that fold had gone to the front, and every fold after it changed
// the front recap (pytest-9401 on the dense engine, 1.086 against 1.041).
func (s *Planner) midRewrites(b Budget, budget int, at map[int][]shedCandidate) []option {
	if s.fold.midTo == 0 {
		return nil
	}
	if s.cache.model.Class != CacheCheckpointed && neededRoom(s.fold.recap, s.fold.front.msg.Content) > budget-s.fold.front.text-len(appendHeading)-2 {
		// What the front recap leaves cannot hold the facts and the
		// files changed: a fold of the front, which rewrites both
		// recaps into the whole budget, keeps them. (Where the engine
		// restarts from checkpoints, that fold costs the whole fixed
		// prefix again, and the rewrite goes ahead.)
		return nil
	}
	cur := s.currentStart()
	lo, n := s.fold.midTo, len(s.entries)
	// Everything before the middle recap stays; the verbatim text of what
	// it stands for comes along, and that of the turns it takes in.
	before := s.countedSize() - s.view.sizeAt(middleRecap)
	verb, verbAfter := 0, 0
	for i := s.fold.midFrom; i < n; i++ {
		if i < lo {
			verb += s.verbatimOf(i)
		} else {
			before -= s.entries[i].size
			verbAfter += s.verbatimOf(i)
		}
	}
	starts := append([]olderStart{{at: s.fold.midFrom, cached: s.midLeadKept()}}, s.earlierStarts()...)
	for i := range starts {
		st := &starts[i]
		st.head = s.rewrittenMid(budget, s.tokensAt(s.cfg.PrefixChars+before-st.size))
		st.extra = s.restartExtra(s.cfg.PrefixChars+before-st.size+st.cached) + s.noteCost()
	}
	gap := int(float64(b.Usable) * minGapShare)
	var out []option
	var sums keptSums
	for g := n - 1; g > lo; g-- {
		sums.add(s, g, cur, at)
		verbAfter -= s.verbatimOf(g)
		if g > cur || s.log[g].Role != Assistant {
			continue
		}
		for _, k := range sums.forms(s, b, g < cur) {
			// In place first; where that leaves less than the gap, from
			// the nearest earlier start that makes it.
			for _, st := range starts {
				mid := st.head + verb + st.verb + verbAfter
				size := before - st.size + mid + k.bytes
				o := option{shedFrom: s.view.Len(), fold: g, mid: st.at, shedKept: k.shed, rewrite: true}
				o.after = s.est.Known(size + s.cfg.PrefixChars)
				o.est = s.price(size, k.fresh+mid)
				o.cost = s.est.Known(max(mid-st.cached+k.bytes-k.fresh, 0)) + st.extra
				o.room = b.ShedPoint - o.after
				if o.room >= gap || st.at == s.fold.midFrom {
					out = append(out, o)
				}
				if o.room >= gap {
					break
				}
			}
		}
	}
	return out
}

// olderStart is a place where a rewrite of the middle recap may start
// (midRewrites): entry at, the bytes of the older turns from it up to the
// recap (0 where the recap stands), what of them the rewritten recap
// carries word for word, and the rewrite's head (rewrittenMid) and
// restart beyond the change (restartExtra, the note's cost with it) from
// there.
type olderStart struct {
	at, size, verb int
	head, extra    int
	// cached is how much of the recap's opening a rewrite from here
	// leaves as it was sent (midLeadKept).
	cached int
}

// midLeadKept is how many bytes of the middle recap, as it stands, a
// rewrite in place sends again as they were: its preamble and what the
// user said in the turns it stands for, which a rewrite writes first
// (writeLead), while their present forms are what it carries; else its
// preamble alone.
func (s *Planner) midLeadKept() int {
	v, _ := s.verbatimText(s.fold.midFrom, s.fold.midTo)
	var lead strings.Builder
	writeLead(&lead, midPreamble, v)
	if strings.HasPrefix(s.fold.mid.msg.Content, lead.String()) {
		return lead.Len()
	}
	return len(midPreamble)
}

// earlierStarts are the places among the older turns before the middle
// recap, nearest it first, where a rewrite of it may start instead
// (midStartsAt): the recap then takes in the older turns from there. The
// turn the front recap leads is not one of them.
func (s *Planner) earlierStarts() []olderStart {
	var out []olderStart
	k := s.view.find(middleRecap)
	size, verb := 0, 0
	for j := k - 1; j >= 0; j-- {
		it := &s.view.items[j]
		size += it.size
		if it.of <= s.fold.upTo {
			break
		}
		verb += s.verbatimOf(it.of)
		if s.midStartsAt(it.of) {
			out = append(out, olderStart{at: it.of, size: size, verb: verb})
		}
	}
	return out
}

// rewriteRoom is the room, in bytes, of the text of a middle recap
// rewritten in place, in a recap budget of so many bytes, for one that
// starts at token start: what the front recap leaves, at most
// rewriteShare of the budget, so that parts can be appended to it again;
// leanShare where the turns before it, with so lean a recap, already
// make the live floor. Every fold prefills the recap again: below the
// floor its text takes the place of kept turns, prefilled again as
// well, but above it, it is a cost the room does not pay back.
func (s *Planner) rewriteRoom(budget, start int) int {
	share := rewriteShare
	if start >= s.leanFrom(budget) {
		share = leanShare
	}
	return max(min(budget*share/8, budget-s.fold.front.text-len(appendHeading)-2), 0)
}

// leanFrom is the token from which a middle recap rewritten in place is
// lean (rewriteRoom): where the turns before it, with a lean recap, make
// the live floor.
func (s *Planner) leanFrom(budget int) int {
	return int(float64(s.Budget().Usable)*liveFloorShare) - s.est.Known(budget*leanShare/8)
}

// rewrittenMid is the size, in bytes, of a middle recap rewritten in
// place that starts at token start, what the user said in it aside: its
// preamble and its room for the recap's facts as they stand
// (rewriteRoomFor).
func (s *Planner) rewrittenMid(budget, start int) int {
	return len(midPreamble) + s.rewriteRoomFor(budget, start, s.fold.recap, s.fold.front.msg.Content) + msgOverhead
}

// midStartsAt reports whether a new middle recap may start at entry i: a
// message not a tool's (its call would be folded away), after one not the
// user's (the recap is the user's, and two user messages in a row are not
// valid roles).
func (s *Planner) midStartsAt(i int) bool {
	return i > 0 && i < len(s.log) && s.log[i].Role != Tool && s.log[i-1].Role != User
}

// rewriteShare is a rewritten middle recap's most room, in eighths of
// the recap budget; leanShare its room above the live floor.
const (
	rewriteShare = 3
	leanShare    = 2
)

// midTables is what pricing folds into the middle recap needs at every
// boundary, computed once per event.
type midTables struct {
	// lo is the first entry a fold into the middle recap may take, n the
	// number of entries. suf[i-lo] is the bytes of entries [i, n) as they
	// stand; verb[i-lo] what of the entries [lo, i) a recap carries
	// verbatim.
	lo, n     int
	suf, verb []int
	// part is the room of the middle recap's next part; head what opens
	// it (its preamble, or the middle recap it is appended to, cached of
	// it carried before); keepTo the size, in tokens, a new middle recap
	// aims to leave the request at.
	part, head, cached, keepTo int
	// reset is set when a new middle recap may start the engine's cache
	// over; steady is the size a middle recap rewritten in place keeps,
	// verbatim text aside, lean that of one that starts at or after token
	// leanFrom (rewriteRoom; on an engine that restarts from checkpoints).
	reset                  bool
	steady, lean, leanFrom int
	// starts are the places a new middle recap may begin, in order: group
	// starts after a message not the user's (two user messages in a row
	// are not valid roles). On an engine that restarts from checkpoints,
	// anchored are those of them just after a checkpoint a full slot
	// keeps (anchoredStarts); nil on any other.
	starts, anchored []int
}

// midPricing builds the tables for a recap budget of so many bytes.
func (s *Planner) midPricing(b Budget, budget, cur int) midTables {
	m := midTables{lo: s.fold.upTo, n: len(s.entries)}
	if s.fold.midTo > 0 {
		m.lo = s.fold.midTo
	}
	lo, n := m.lo, m.n
	m.suf = make([]int, n-lo+1)
	for i := n - 1; i >= lo; i-- {
		m.suf[i-lo] = m.suf[i+1-lo] + s.entries[i].size
	}
	m.verb = make([]int, n-lo+1)
	for i := lo; i < n; i++ {
		m.verb[i+1-lo] = m.verb[i-lo] + s.verbatimOf(i)
	}
	m.part = s.midRoom(budget)
	m.head = len(midPreamble)
	if s.fold.midTo > 0 {
		m.cached = len(s.fold.mid.msg.Content)
		m.head = m.cached + len(appendHeading) + 2
	}
	m.keepTo = int(float64(b.Usable) * max(liveFloorShare, midKeepShare))
	if s.fold.midTo == 0 {
		for i := lo + 1; i < cur; i++ {
			if s.midStartsAt(i) {
				m.starts = append(m.starts, i)
			}
		}
		if s.cache.model.Class == CacheCheckpointed {
			m.reset = s.cache.primer.per64 > 0 && s.resetFits(b)
			m.anchored = s.anchoredStarts(m.starts)
			m.leanFrom = s.leanFrom(budget)
			m.steady, m.lean = s.rewrittenMid(budget, -1), s.rewrittenMid(budget, m.leanFrom)
		}
	}
	return m
}

// anchoredStarts are the starts of a new middle recap, on an engine that
// restarts from checkpoints, that stand just after a checkpoint a full
// slot keeps (durable): the first at or after each. Every later fold into
// that recap, or rewrite of it, changes the request at its start and
// restarts at that checkpoint, so a start further from it would cost the
// turns between at every fold. With no durable checkpoint before any
// start, all of them.
func (s *Planner) anchoredStarts(starts []int) []int {
	durable := s.durable()
	if len(durable) == 0 {
		return starts
	}
	offset := s.cfg.PrefixChars
	k, at := 0, make(map[int]int, len(starts))
	for j := range s.view.items {
		it := &s.view.items[j]
		for k < len(starts) && starts[k] < it.of {
			k++
		}
		if k < len(starts) && starts[k] == it.of {
			at[it.of] = offset
		}
		offset += it.size
	}
	var out []int
	d := 0
	for _, g := range starts {
		b, ok := at[g]
		if !ok {
			continue
		}
		t := s.tokensAt(b)
		for d < len(durable) && durable[d] <= t {
			d++
			if len(out) == 0 || out[len(out)-1] != g {
				out = append(out, g)
			}
		}
	}
	if len(out) == 0 {
		return starts
	}
	return out
}

// durableExtra is how many tokens before a change at byte position at
// (the fixed prefix included) the engine restarts once a full slot has
// thinned what later requests do not take: back to the newest durable
// checkpoint before it.
func (s *Planner) durableExtra(at int) int {
	c := min(s.tokensAt(at), s.cache.engine.n)
	d := 0
	for _, p := range s.durable() {
		if p <= c {
			d = p
		}
	}
	return c - d
}

// durable are the checkpoints of the engine's slot, as the mirror holds
// them, that a full slot keeps longest: the first, and each that stands
// at least MinStep after the one kept before it.
func (s *Planner) durable() []int {
	var out []int
	for _, p := range s.cache.engine.points {
		if p.at <= 0 {
			continue
		}
		if len(out) == 0 || p.at-out[len(out)-1] >= s.cache.model.MinStep {
			out = append(out, p.at)
		}
	}
	return out
}

// midOption prices the fold into the middle recap up to boundary g that
// keeps the turns from g on in form k. With no middle recap yet, it
// starts the new one where midStart says; ok is false when no start will
// do. A reset starts it over the engine's cache (option.reset): its
// restart costs everything before the recap and the primer, counted
// once over the folds that restart at its checkpoint after it
// (resetSpread).
func (s *Planner) midOption(b Budget, m *midTables, g int, k kept, how startHow) (o option, ok bool) {
	kb, kf := k.bytes, k.fresh
	from := m.lo
	if s.fold.midTo == 0 {
		keepTo := m.keepTo
		if how == reset {
			// Everything before the recap is prefilled again: the
			// fewest older turns that keep the request live.
			keepTo = int(float64(b.Usable) * liveFloorShare)
		}
		j := s.midStart(b, m, keepTo, g, kb, kf)
		if j < 0 {
			return option{}, false
		}
		from = m.starts[j]
		if how == reset && m.wordy(from, g) {
			return option{}, false
		}
	}
	return s.midOptionAt(b, m, g, k, how, from)
}

// wordy reports whether a new middle recap of the turns from entry f up
// to g, on an engine that restarts from checkpoints, would carry more of
// the user's words than half the text a rewrite keeps: rewritten at every
// fold, those are prefilled again each time, where a fold of the front
// keeps them in its steady part. A reset is not taken then, though its
// price counts them as an anchored start's does (which is no longer kept
// out, see anchoredOptions): on the replay a middle recap started over
// the cache (reset) in a chat of pasted logs prefilled its 2.1–2.6k
// tokens of them at each of four folds, 1.18 at 32k against 1.12, and
// without this rule still 1.154 against 1.115.
func (m *midTables) wordy(f, g int) bool {
	return m.verb[g-m.lo]-m.verb[f-m.lo] > m.steady/2
}

// midOptionAt is midOption for a new middle recap that starts at entry
// from (with one already, from is where it starts).
func (s *Planner) midOptionAt(b Budget, m *midTables, g int, k kept, how startHow, from int) (o option, ok bool) {
	kb, kf, shed := k.bytes, k.fresh, k.shed
	before := s.countedSize() - m.suf[0] - s.view.sizeAt(middleRecap) // the recap and the older turns
	if s.fold.midTo == 0 {
		before = s.countedSize() - m.suf[from-m.lo]
	}
	mid := m.head + m.part + m.verb[g-m.lo] - m.verb[from-m.lo] + msgOverhead
	size := before + mid + kb
	o = option{shedFrom: s.view.Len(), fold: g, mid: from, shedKept: shed, reset: how == reset}
	o.after = s.est.Known(size + s.cfg.PrefixChars)
	o.est = s.price(size, kf+mid-m.cached)
	o.room = b.ShedPoint - o.after
	if s.fold.midTo != 0 || m.anchored == nil {
		o.cost = s.est.Known(max(mid-m.cached+kb-kf, 0)) + s.noteCost() + s.restartExtra(s.cfg.PrefixChars+before+m.cached)
		return o, true
	}
	// A new middle recap on an engine that restarts from checkpoints: every
	// later fold into it restarts at the checkpoint a full slot keeps
	// before its start (or, after a reset, at its start) and prefills the
	// whole recap again, at the size a rewrite keeps it. It is priced at
	// such a fold's cost, and what this fold costs beyond it counted over
	// resetSpread folds.
	rewritten := m.steady
	if s.tokensAt(s.cfg.PrefixChars+before) >= m.leanFrom {
		rewritten = m.lean
	}
	steady := max(mid, rewritten+m.verb[g-m.lo]-m.verb[from-m.lo])
	gap, now := 0, 0
	if how == reset {
		_, primer := s.primerOf()
		now = s.prefixCount() + s.est.Known(before) + primer
		if s.fold.folds > 0 {
			// The slot keeps no checkpoint before the recap after it: a
			// later fold of the front prefills the fixed prefix again, as
			// often as the folds so far were of the front.
			gap = s.prefixCount() * s.fold.fronts / s.fold.folds
		}
	} else {
		gap = s.durableExtra(s.cfg.PrefixChars + before)
		now = max(s.restartExtra(s.cfg.PrefixChars+before)-gap, 0)
	}
	o.cost = s.est.Known(max(steady+kb-kf, 0)) + gap + s.noteCost() + now/resetSpread
	return o, true
}

// resetFits reports whether the session's results so far would each fit
// beside a middle recap started over the engine's cache: after a reset
// the slot keeps no checkpoint before the recap, so a round too large to
// fit after it brings a fold of the front that prefills the whole fixed
// prefix again. It holds when the largest result yet takes at most half
// of what the request leaves, at its live floor, before the next event's
// gap: a round of two such results still fits.
func (s *Planner) resetFits(b Budget) bool {
	largest := 0
	for i := range s.entries {
		if s.log[i].Role == Tool {
			largest = max(largest, s.entries[i].size, len(s.log[i].Content))
		}
	}
	room := b.ShedPoint - int(float64(b.Usable)*(liveFloorShare+minGapShare))
	return 2*s.est.Known(largest) <= room
}

// resetSpread is how many folds a reset's restart is counted over: the
// folds into the middle recap after it restart at its checkpoint.
const resetSpread = 6

// midStart is the index in m.starts of where a new middle recap up to g
// begins, kb bytes (kf of them fresh) kept after it: the fewest older
// turns that keep the request at the share it aims for (the most room for
// the same cost), but not so many that it stays over the shed target; -1
// when there is no such start.
func (s *Planner) midStart(b Budget, m *midTables, keepTo, g, kb, kf int) int {
	n := sort.SearchInts(m.starts, g)
	sizeAt := func(j int) (size, mid int) {
		f := m.starts[j]
		mid = m.head + m.part + m.verb[g-m.lo] - m.verb[f-m.lo] + msgOverhead
		return s.countedSize() - m.suf[f-m.lo] + mid + kb, mid
	}
	j := sort.Search(n, func(j int) bool {
		size, _ := sizeAt(j)
		return s.est.Known(size+s.cfg.PrefixChars) >= keepTo
	})
	over := sort.Search(n, func(j int) bool {
		size, mid := sizeAt(j)
		return s.price(size, kf+mid) > b.ShedTarget
	})
	return max(min(j, over-1, n-1), -1)
}
