package contextwin

import "sort"

// Pricing events. A shrink event changes the request somewhere; the engine
// keeps its cache up to the first changed byte and prefills everything
// after it again. So an event is priced by the tokens it re-prefills that
// earlier requests had already carried (cost), and judged by the growth it
// makes room for before the next event (room): the planner takes the
// option with the least cost per token of room among those that leave the
// next event at least minGap of growth away, within the budget's bounds.
//
// The options are
//   - a shed after view item k: every shed candidate from k on goes to its
//     summary; the request changes at k, and everything before it stays
//     byte for byte (the fixed prefix, the recap, older turns);
//   - a fold at group start g: the turns before g go into the recap, which
//     changes the request right after the fixed prefix (or after the old
//     recap when it appends to it); the turns kept may be shed too, at no
//     extra cost since they are re-prefilled anyway;
//   - a fold into the middle recap up to g: the older turns after the
//     recap stay as they were sent, the turns between them and g go into
//     a recap that stands after them (or are appended to it), and only
//     that recap and the turns from g on are re-prefilled. A fold of the
//     front, deeper and rarer, takes the older turns and the middle recap
//     in when the recap budget has no room left for another part.
//
// Sheds and folds of the front are priced in one backward pass over the
// view (O(n) in its messages), folds into the middle in another (a binary
// search per boundary for how many older turns to keep), so an event at
// 100k messages stays cheap.

// minGapShare is the least growth, as a share of usable, an event must
// make room for before the next one.
const minGapShare = 0.3

// minGapFloor is the least growth, as a share of usable, any event leaves
// before the next: below it the current round's results are cut.
const minGapFloor = 0.25

// midKeepShare is the least a fold into the middle recap leaves in the
// request, as a share of usable: its cost does not depend on how many
// older turns it leaves as they were sent, so it keeps more of them live
// than a fold of the front can afford to.
const midKeepShare = 0.45

// liveFloorShare is the least a fold leaves in the request, as a share of
// usable: the model keeps working with a live context, not only a recap.
const liveFloorShare = 0.23

// option is one way to shrink the request.
type option struct {
	// shedFrom is the view item from which every shed candidate is shed;
	// the view's length when nothing is shed (beyond a fold's kept part).
	shedFrom int
	// fold is the group start up to which turns are folded; 0 for none.
	fold int
	// mid, when not 0, makes the fold one into the middle recap: the
	// turns from mid up to fold go into it, and those before mid stay.
	mid int
	// shedKept sheds the candidates of the turns a fold keeps.
	shedKept bool
	// rewrite makes a fold into the middle recap rewrite it in place:
	// the turns it stands for and those up to fold go into a new one,
	// so the request changes at its start.
	rewrite bool
	// reset makes a new middle recap start the engine's cache over: on an
	// engine that restarts from checkpoints, with no checkpoint a full
	// slot keeps near where it starts, the request before the fold's is
	// sent without the cache, so the engine's first checkpoint stands at
	// the recap's start, and every later fold into it restarts there.
	reset bool
	// after is the likely size of the request after it, in tokens; est
	// the decision estimate; cost the tokens re-prefilled that earlier
	// requests carried; room the growth before the shed point.
	after, est, cost, room int
}

// noteCost is what the note round before a fold costs, in tokens of
// prefill: the note the model writes, at what a generated token costs
// against a prefilled one. A fold with no note round to come (asked
// already, or nothing to note) costs none.
func (s *Planner) noteCost() int {
	if s.note.asked || !s.foldable() {
		return 0
	}
	tokens := s.note.tokens
	if tokens == 0 {
		tokens = noteGuess
	}
	return int(float64(tokens) * s.decodeCost())
}

// noteGuess is a note's length in tokens before the first note is seen.
const noteGuess = 300

// DefaultDecodeCost is what the planner counts a generated token at, in
// prompt tokens. An engine prefills about 20 in the time it generates one
// (800 against 40 a second for a 27–32B model on a consumer GPU at 32k),
// but the note is asked before whichever fold comes, so its price only
// weighs folds against sheds: counted at 20, the replay's sessions
// prefilled up to a fifth more with no fewer folds, at 8 some more, at 3
// the same or less.
const DefaultDecodeCost = 3

// decodeCost is Config.DecodeCost, its default for 0.
func (s *Planner) decodeCost() float64 {
	switch {
	case s.cfg.DecodeCost < 0:
		return 0
	case s.cfg.DecodeCost == 0:
		return DefaultDecodeCost
	}
	return s.cfg.DecodeCost
}

// better reports whether o is cheaper per token of room than p.
func (o option) better(p option) bool {
	// cost/room < p.cost/p.room, without division.
	l, r := int64(o.cost)*int64(p.room), int64(p.cost)*int64(o.room)
	if l != r {
		return l < r
	}
	return o.room > p.room
}

// candidateAt maps an entry to its shed candidates, in shed order.
func candidateAt(cands []shedCandidate) map[int][]shedCandidate {
	at := make(map[int][]shedCandidate, len(cands))
	for _, c := range cands {
		at[c.index] = append(at[c.index], c)
	}
	return at
}

// shedOptions prices a shed after each view item that holds a candidate,
// walking the view backwards from its end.
func (s *Planner) shedOptions(b Budget, at map[int][]shedCandidate) []option {
	var out []option
	size, fresh := s.counted()
	// tail: bytes of the view from item k on as they would be after the
	// shed; kept: fresh bytes among them not touched by it (new content
	// the request carries anyway).
	tail, kept := 0, 0
	orig := 0 // bytes of the view from item k on as they stand
	for k := s.view.Len() - 1; k >= 0; k-- {
		it := &s.view.items[k]
		orig += it.size
		i := it.of
		if i == middleRecap {
			tail += it.size
			kept += it.fresh
			continue
		}
		if i < 0 {
			break // the recap: a shed never reaches it
		}
		e := &s.entries[i]
		cs := at[i]
		if len(cs) == 0 {
			tail += e.size
			kept += e.fresh
			continue
		}
		n, f := size, fresh
		for _, c := range cs {
			n, f = s.afterShed(c, n, f)
		}
		if n == size {
			tail += e.size
			kept += e.fresh
			continue
		}
		tail += e.size + (n - size)
		size, fresh = n, f
		o := option{shedFrom: k, after: s.est.Known(size + s.cfg.PrefixChars), est: s.price(size, fresh)}
		o.cost = s.est.Known(max(tail-kept, 0)) + s.restartExtra(s.cfg.PrefixChars+s.view.size-orig)
		o.room = b.ShedPoint - o.after
		out = append(out, o)
	}
	return out
}

// foldOptions prices a fold at each group start between the recap and the
// current round, with and without shedding the turns it keeps.
func (s *Planner) foldOptions(b Budget, at map[int][]shedCandidate) []option {
	cur := s.currentStart()
	recapChars := s.est.NewChars(b.Recap)
	// verbatim: the user's messages and the task payload the recap carries
	// word for word, up to each boundary.
	var out []option
	// Walk the entries backwards from the end, keeping the sizes of what a
	// fold at each group start keeps.
	var sums keptSums // the kept entries
	verbatimAll := s.verbatimBytes(cur)
	verbatimOld := s.verbatimBytes(s.fold.upTo) // already in the recap
	verbatimAfter := 0                          // verbatim bytes of user messages at or after the boundary
	room := s.frontRoom(recapChars, s.ledger(), s.fold.front.msg.Content)
	low := s.fold.upTo + 1
	if s.fold.midTo > 0 {
		low = s.fold.midTo // a fold of the front takes the middle recap in
	}
	for g := len(s.entries) - 1; g >= low; g-- {
		sums.add(s, g, cur, at)
		if g < cur && s.isVerbatimUser(g) {
			verbatimAfter += s.verbatimLen(g)
		}
		if s.log[g].Role == Tool || g > cur {
			continue // not a group start, or inside the current round
		}
		// A rewritten recap takes its room (frontRoom) and changes
		// the request after its front (the preamble and what the user
		// said, the same as in the recap it replaces); an appended one
		// keeps the old recap, and the request's cache with it, up to its
		// end.
		recap, cached := len(foldPreamble)+room+verbatimAll-verbatimAfter, 0
		if s.fold.front.msg.Content != "" {
			cached = s.fold.front.steady
		}
		takes := verbatimAll - verbatimAfter - verbatimOld // of the user's words
		if s.canAppend(recapChars) && !s.mustRewrite(takes != 0) {
			cached = len(s.fold.front.msg.Content)
			recap = cached + recapChars - s.fold.front.text + takes
		}
		if s.fold.split && cached > 0 {
			cached += msgOverhead // the rest follows the steady part's message
		}
		extra := s.restartExtra(s.cfg.PrefixChars+cached) + s.noteCost()
		for _, k := range sums.forms(s, b, g < cur) {
			kb, kf, shed := k.bytes, k.fresh, k.shed
			size := recap + kb
			o := option{shedFrom: s.view.Len(), fold: g, shedKept: shed}
			o.after = s.est.Known(size + s.cfg.PrefixChars)
			o.est = s.price(size, kf+recap)
			o.cost = s.est.Known(max(size-kf-cached, 0)) + extra
			o.room = b.ShedPoint - o.after
			out = append(out, o)
		}
	}
	return out
}

// midOptions prices folds into the middle recap: the turns between the
// older ones, which stay as they were sent, and the newest ones go into a
// recap that stands between them, so the request changes only after the
// older turns. With no middle recap yet, for each boundary g it takes the
// fewest older turns that keep the request above the live floor — the
// most room for the cost, which is the same whatever it keeps before the
// change; with one, the turns from its end on are appended to it.
func (s *Planner) midOptions(b Budget, at map[int][]shedCandidate) []option {
	budget := s.est.NewChars(b.Recap)
	out := s.midRewrites(b, budget, at)
	if !s.canMid(budget) {
		return out
	}
	cur := s.currentStart()
	m := s.midPricing(b, budget, cur)
	var sums keptSums
	for g := m.n - 1; g > m.lo; g-- {
		sums.add(s, g, cur, at)
		if g > cur || s.log[g].Role != Assistant {
			continue // inside the current round, or not followed by a recap validly
		}
		for _, k := range sums.forms(s, b, g < cur) {
			for _, how := range m.hows() {
				if how == anchored {
					out = s.anchoredOptions(b, &m, g, k, out)
					continue
				}
				if o, ok := s.midOption(b, &m, g, k, how); ok {
					out = append(out, o)
				}
			}
		}
	}
	return out
}

// anchoredOptions prices a new middle recap up to g at each of the
// anchored starts before it (anchoredStarts), appended to out. Any of
// them costs the same at every later fold: the recap and the turns
// between the checkpoint and its start; so an earlier one, which makes
// more room, is priced too, down to the live floor (choose). But not one
// whose recap would carry more of the user's words than half its own
// text: rewritten at every fold, those are prefilled again each time,
// where a fold of the front keeps them in its steady part.
func (s *Planner) anchoredOptions(b Budget, m *midTables, g int, k kept, out []option) []option {
	for _, f := range m.anchored {
		if f >= g {
			break
		}
		if m.verb[g-m.lo]-m.verb[f-m.lo] > m.steady/2 {
			continue
		}
		if o, ok := s.midOptionAt(b, m, g, k, anchored, f); ok {
			out = append(out, o)
		}
	}
	return out
}

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

// midRewrites prices folds that rewrite the middle recap in place, on an
// engine that restarts from checkpoints: the turns it stands for and
// those after it up to each boundary go into a new one, of rewriteRoom,
// that stands where it stood. The request changes at its start, after
// the older turns, which stay as they were sent; there the engine keeps a
// checkpoint (anchoredStarts), where it keeps none near the recap's end
// once later requests have filled the slot. So a recap that is full, or
// that an appended part would re-prefill whole anyway, is renewed at the
// size a rewrite keeps, without a fold of the front, which would
// re-prefill the older turns too.
func (s *Planner) midRewrites(b Budget, budget int, at map[int][]shedCandidate) []option {
	if s.fold.midTo == 0 || s.cache.model.Class != CacheCheckpointed {
		// (On an engine that keeps any prefix, parts appended to the
		// recap cost only themselves, and a fold of the front, when the
		// budget is full, makes room for longer: fewer note rounds.)
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
	head := s.rewrittenMid(budget, s.midStartTokens())
	extra := s.restartExtra(s.cfg.PrefixChars+before) + s.noteCost()
	var out []option
	var sums keptSums
	for g := n - 1; g > lo; g-- {
		sums.add(s, g, cur, at)
		verbAfter -= s.verbatimOf(g)
		if g > cur || s.log[g].Role != Assistant {
			continue
		}
		mid := head + verb + verbAfter
		for _, k := range sums.forms(s, b, g < cur) {
			size := before + mid + k.bytes
			o := option{shedFrom: s.view.Len(), fold: g, mid: s.fold.midFrom, shedKept: k.shed, rewrite: true}
			o.after = s.est.Known(size + s.cfg.PrefixChars)
			o.est = s.price(size, k.fresh+mid)
			o.cost = s.est.Known(max(mid+k.bytes-k.fresh, 0)) + extra
			o.room = b.ShedPoint - o.after
			out = append(out, o)
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
	return len(midPreamble) + s.rewriteRoomFor(budget, start, s.ledger(), s.fold.front.msg.Content) + msgOverhead
}

// ledger is the recap's ledger of exact facts as it stands, nil before
// the first fold.
func (s *Planner) ledger() []Fact {
	if s.fold.recap == nil {
		return nil
	}
	return s.fold.recap.Ledger
}

// midStartsAt reports whether a new middle recap may start at entry i: a
// message not a tool's (its call would be folded away), after one not the
// user's (the recap is the user's, and two user messages in a row are not
// valid roles).
func (s *Planner) midStartsAt(i int) bool {
	return i > 0 && i < len(s.log) && s.log[i].Role != Tool && s.log[i-1].Role != User
}

// midStartTokens is the token position where the middle recap starts,
// -1 when there is none.
func (s *Planner) midStartTokens() int {
	k := s.view.find(middleRecap)
	if k < 0 {
		return -1
	}
	return s.tokensAt(s.cfg.PrefixChars + s.view.sizeBefore(k))
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
	}
	return s.midOptionAt(b, m, g, k, how, from)
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

// keptSums are the sizes of the entries a fold keeps after its boundary,
// summed walking the entries backwards: as they stand and with their
// shed candidates shed (shedEntry).
type keptSums struct {
	keep, fresh, shedKeep, shedFresh int
}

// add takes entry g in.
func (k *keptSums) add(s *Planner, g, cur int, at map[int][]shedCandidate) {
	e := &s.entries[g]
	k.keep += e.size
	k.fresh += e.fresh
	sn, sf := s.shedEntry(g, cur, at)
	k.shedKeep += sn
	k.shedFresh += sf
}

// forms are keptForms of the sums.
func (k *keptSums) forms(s *Planner, b Budget, bounded bool) []kept {
	return s.keptForms(b, bounded, k.keep, k.fresh, k.shedKeep, k.shedFresh)
}

// verbatimOf is what entry i adds to a recap word for word: a message of
// the user's, or the task's payload.
func (s *Planner) verbatimOf(i int) int {
	v := 0
	if s.isVerbatimUser(i) {
		v = s.verbatimLen(i)
	}
	if i == s.task.payload {
		v += len(s.sentContent(i)) + 120
	}
	return v
}

// kept is what a fold keeps after its boundary: bytes, fresh bytes, and
// whether the kept turns' candidates are shed.
type kept struct {
	bytes, fresh int
	shed         bool
}

// keptForms are the forms a fold's kept turns may take: as they stand,
// and shed when shedding saves anything. A fold that keeps more than the
// fold keeps verbatim is no option, unless it keeps only the current round
// (bounded is false: its boundary is the current round's start).
func (s *Planner) keptForms(b Budget, bounded bool, keep, keepFresh, shedKeep, shedFresh int) []kept {
	var out []kept
	for _, k := range []kept{{keep, keepFresh, false}, {shedKeep, shedFresh, true}} {
		if k.shed && shedKeep == keep {
			continue
		}
		if bounded && s.est.Known(k.bytes) > b.FoldKeeps {
			continue // keeps more verbatim than a fold may
		}
		out = append(out, k)
	}
	return out
}

// shedEntry is entry g's size and fresh bytes once its shed candidates
// are shed; an entry of the current round (from cur on) stays as it is.
func (s *Planner) shedEntry(g, cur int, at map[int][]shedCandidate) (size, fresh int) {
	e := &s.entries[g]
	size, fresh = e.size, e.fresh
	if g < cur {
		for _, c := range at[g] {
			size, fresh = s.afterShedEntry(c, size, fresh)
		}
	}
	return size, fresh
}

// afterShedEntry is the size and fresh bytes of one entry once c is shed.
func (s *Planner) afterShedEntry(c shedCandidate, size, fresh int) (int, int) {
	e := &s.entries[c.index]
	n, f := s.afterShed(c, e.size, e.fresh)
	return size + n - e.size, fresh + f - e.fresh
}

// isVerbatimUser reports whether entry i is a message of the user's that
// every request carries word for word (not a continuation prompt).
func (s *Planner) isVerbatimUser(i int) bool {
	return s.log[i].Role == User && !s.log[i].Continuation
}

// verbatimBytes is the size of what a fold up to (not including) entry
// end carries verbatim: the user's messages and the task payload.
func (s *Planner) verbatimBytes(end int) int {
	n := 0
	for i := 0; i < end; i++ {
		if s.isVerbatimUser(i) {
			n += s.verbatimLen(i)
		}
	}
	if p := s.task.payload; p >= 0 && p < end {
		n += len(s.sentContent(p)) + 120
	}
	return n
}

// verbatimLen is what user message i takes in the recap.
func (s *Planner) verbatimLen(i int) int {
	if blk := s.userBlock(i); blk != "" {
		return len(blk) + 2
	}
	return 0
}

// choose picks the cheapest option per token of room among those that
// leave at least the gap before the next event and keep the request in
// the window and above the live floor; when none does, the one with the
// most room.
func (s *Planner) choose(b Budget, opts []option) (option, bool) {
	gap := int(float64(b.Usable) * minGapShare)
	floor := int(float64(b.Usable) * liveFloorShare)
	best, found := option{}, false
	for _, o := range opts {
		if o.room < gap || o.est > b.Usable || (o.fold > 0 && o.after < floor) {
			continue
		}
		if !found || o.better(best) {
			best, found = o, true
		}
	}
	if found {
		return best, true
	}
	for _, o := range opts {
		if !found || o.room > best.room {
			best, found = o, true
		}
	}
	return best, false
}
