package contextwin

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
	room := s.frontRoom(recapChars, s.fold.recap, s.fold.front.msg.Content)
	appendable := s.canAppend(recapChars)
	rewritesTakes := s.mustRewrite(true) // the same at every boundary: computed once
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
		if appendable && !(takes != 0 && rewritesTakes) {
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
// more room, is priced too, down to the live floor (choose). The user's
// words a recap carries are in that price (midOptionAt's steady size):
// such a recap is no worse than a fold that stops short of them, since
// the message kept after the recap is prefilled again at the next fold
// as well. (Kept out when they were most of its text, as a reset still
// is (wordy), the pasted-log chats at 32k on the recurrent engine kept
// the newest paste after the recap at each fold: 1.08–1.15 against
// 1.08–1.12, 1.146 against 1.087 on the worst of eight fresh seeds.)
func (s *Planner) anchoredOptions(b Budget, m *midTables, g int, k kept, out []option) []option {
	for _, f := range m.anchored {
		if f >= g {
			break
		}
		if o, ok := s.midOptionAt(b, m, g, k, anchored, f); ok {
			out = append(out, o)
		}
	}
	return out
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
