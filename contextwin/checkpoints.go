package contextwin

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// The checkpoint requests a plan asks for on an engine that restarts from
// checkpoints (Plan.Checkpoints): after a fold of the front, at a reset,
// the chain's planted checkpoint, the primer, and the cut before a fold's
// change.

// frontCheckpoints are the checkpoint requests after a fold of the front
// recap laid out in two messages (splitFront), each the start of the
// request itself, so that the request goes on from the last one's end
// and nothing is prefilled twice: when the fold rewrote the recap, its
// steady part alone (the request goes on with the assistant's header,
// which ends that one too), whose checkpoint stands just before the
// rest, where the next rewrite changes the request; then the rest as the
// start of the assistant's turn, unclosed (llama.cpp prefills a last
// assistant message), whose checkpoint stands just before its end, where
// the next fold that appends to the recap changes it; between them, on a
// rewrite, the part of the rest this rewrite kept of the last one's text,
// which the next rewrite is likely to keep too. (The assistant's message
// goes without its reasoning: a prefill renders its text alone.) ok is
// false when the recap is not laid out so or the fold was into the middle
// recap.
func (s *Planner) frontCheckpoints(msgs []Message) (cps [][]Message, ok bool) {
	if !s.fold.split || !s.fold.frontMoved || len(msgs) < 2 || len(msgs) != s.view.Len() ||
		s.view.items[0].of != frontRecap || s.view.items[1].of != s.fold.lead {
		return nil, false
	}
	if s.fold.rewrote {
		cps = append(cps, slices.Clone(msgs[:1]))
	}
	if s.cache.noPrefill {
		// The engine refuses to go on with a last assistant message: after
		// the steady part's request, one ending at the first assistant
		// message after the recap, whose checkpoint lands a micro-batch
		// before its end.
		if cut := s.checkpointCut(msgs); cut > 0 {
			cps = append(cps, slices.Clone(msgs[:cut]))
		}
		return cps, true
	}
	rest := strings.TrimSuffix(s.entries[s.fold.lead].lead, "\n\n")
	if k := s.fold.kept; s.fold.rewrote && k >= keptLeast && k+keptLeast <= len(rest) {
		// What this rewrite kept of the last one's text the next is
		// likely to keep too: a checkpoint at its end.
		cps = append(cps, []Message{msgs[0], {Role: Assistant, Content: rest[:k]}})
	}
	cps = append(cps, []Message{msgs[0], {Role: Assistant, Content: rest}})
	// One that ends before the request changes from the last, at a
	// checkpoint the slot still holds, would only go back from the
	// change to plant it again.
	shared, _ := s.commonBytes(msgs)
	keep := cps[:0]
	for _, c := range cps {
		if end := s.sentBytes(c) - msgOverhead; end > shared || !s.holdsNear(s.tokensAt(end)) {
			keep = append(keep, c)
		}
	}
	return keep, true
}

// resetPlant is the checkpoint request that starts the engine's cache
// over before a fold that started a new middle recap (option.reset): the
// request up to the recap, then the primer, so that the checkpoint the
// engine takes a micro-batch before its end, the slot's first, stands
// just before the recap, where every later fold into it changes the
// request. nil when the request holds no middle recap.
func (s *Planner) resetPlant(msgs []Message) []Message {
	k := s.view.find(middleRecap)
	if k <= 0 || len(msgs) != s.view.Len() {
		return nil
	}
	return append(slices.Clone(msgs[:k]), s.primerAfter(msgs[:k]))
}

// chainPlant is the checkpoint request that goes before an append, on an
// engine that restarts from checkpoints, when that append is the first
// request whose checkpoints reach MinStep past the newest a full slot
// keeps (durable) and the one it takes a micro-batch before its end
// would land inside its new results: the request itself, then the
// primer, so that the checkpoint the chain keeps stands at the end of
// its last message, where a middle recap can start, not inside it. It is
// asked only for the crossing below the size a new middle recap aims to
// leave the request at (midKeepShare), where one will be anchored; nil
// for any other request.
func (s *Planner) chainPlant(msgs []Message) []Message {
	t := &s.cache
	if t.model.Class != CacheCheckpointed || s.fold.midTo > 0 || len(msgs) == 0 || len(t.queue) > 0 ||
		msgs[len(msgs)-1].Role == User || t.primer.per64 == 0 {
		return nil
	}
	durable := s.durable()
	if len(durable) == 0 {
		return nil
	}
	next := durable[len(durable)-1] + t.model.MinStep
	b := s.Budget()
	keepTo := int(float64(b.Usable) * midKeepShare)
	if next > keepTo || next+t.model.MinStep <= keepTo {
		return nil
	}
	// A recap anchored at the slot's first checkpoint needs as many
	// kept turns as reach the live floor, all prefilled again at every
	// fold; where that is more than a fold keeps at its least, the recap
	// will be anchored at this crossing.
	floor := int(float64(b.Usable) * liveFloorShare)
	first := s.firstStartAfter(durable[0])
	if first+s.est.Known(s.rewrittenMid(s.est.NewChars(b.Recap), first))+b.Usable/10 >= floor {
		return nil
	}
	from := s.commonTokens(msgs)
	n := s.tokensIn(msgs, s.sentBytes(msgs)) + promptTail
	if from >= next || n-checkpointBack-t.model.Ubatch < next {
		return nil
	}
	return append(slices.Clone(msgs), s.primerAfter(msgs))
}

// firstStartAfter is the token position of the first place a new middle
// recap may start (midStartsAt) at or after token at, or at when there is
// none.
func (s *Planner) firstStartAfter(at int) int {
	off := s.cfg.PrefixChars
	for k := range s.view.items {
		it := &s.view.items[k]
		if s.midStartsAt(it.of) {
			if t := s.tokensAt(off); t >= at {
				return t
			}
		}
		off += it.size
	}
	return at
}

// RefusedPrefill tells the planner that the engine refused a checkpoint
// request ending in an assistant message it was to go on with (llama.cpp
// does for a template that thinks): none is asked again. One that closed
// the message instead (llama.cpp's --no-prefill-assistant) is told by
// its figures: the request after it did not reuse it whole.
func (s *Planner) RefusedPrefill() { s.cache.noPrefill = true }

// Prefills reports whether the planner still asks for checkpoint
// requests that end in an assistant message the engine goes on with.
func (s *Planner) Prefills() bool { return !s.cache.noPrefill }

// holdsNear reports whether the mirror holds a checkpoint about where a
// checkpoint request ending at token at (an estimate from the marks
// around it) takes one.
func (s *Planner) holdsNear(at int) bool {
	for _, p := range s.cache.engine.points {
		if p.at <= at+16+at/50 && p.at >= at-32-at/30 {
			return true
		}
	}
	return false
}

// keptLeast is the fewest bytes of a recap's text a checkpoint request
// inside it stands apart from its start and end.
const keptLeast = 64

// steadyCut is the checkpoint request that ends inside the front recap a
// micro-batch after its steady part (the preamble and what the user
// said, which the next rewrite keeps): its checkpoint lands just before
// the steady part's end, where that rewrite will change the request.
// It costs a micro-batch: the request after it changes inside the recap
// and restarts at that checkpoint, not at its own end. So it is asked
// only when the next rewrite would otherwise restart more than that
// before the steady part's end, at the checkpoints a full slot keeps
// longest, and when the checkpoints taken at the last fold lived until
// this one (else this one will not live until the next). nil when it is
// not worth it, or when the recap's text after its steady part is
// shorter than a micro-batch.
func (s *Planner) steadyCut(msgs []Message) []Message {
	if len(msgs) == 0 || s.view.Len() != len(msgs) || s.fold.front.steady == 0 || s.fold.split {
		return nil
	}
	it := s.view.items[0]
	if it.of != frontRecap && it.of != s.fold.lead {
		return nil
	}
	t := &s.cache
	base := s.cfg.PrefixChars + msgOverhead
	ub := t.model.Ubatch
	steady := min(s.tokensIn(msgs, base+s.fold.front.steady), t.engine.n)
	// The steady part's end is counted from the marks of the prompt the
	// engine holds, between which the template's overhead per message and
	// the text's density vary (on a byte-level vocabulary the recap's end
	// came out hundreds of tokens late): the checkpoint aims a little
	// before it, never after it.
	target := steady - 32 - steady/30
	if target-s.oldestBefore(steady) <= ub || !s.foldPointKept() {
		// Without it the next rewrite restarts, once the slot has thinned
		// what the requests after this fold take, less than the
		// micro-batch it costs before its change; or checkpoints taken at
		// the last fold did not live until this one.
		return nil
	}
	content := msgs[0].Content
	n := len(s.fold.front.msg.Content) // what is the recap's in the first message
	at := func(cut int) int { return s.tokensIn(msgs, base+cut) + 1 - ub }
	cut := s.fold.front.steady
	for cut < n && at(cut) < target {
		cut += 64
	}
	for cut > s.fold.front.steady && at(cut) > target {
		cut--
	}
	if cut >= n || cut <= s.fold.front.steady {
		return nil // the recap ends before a checkpoint would reach its steady part
	}
	for cut > 0 && !utf8.RuneStart(content[cut]) {
		cut--
	}
	m := msgs[0]
	m.Content = content[:cut]
	return []Message{m}
}

// oldestBefore is the checkpoint a change at token c restarts at once a
// full slot has thinned what later requests did not take: the newest
// before c of those it keeps longest (its first, and each that stands at
// least MinStep after the one kept before it).
func (s *Planner) oldestBefore(c int) int {
	t := &s.cache
	at, kept := 0, -1
	for _, p := range t.engine.points {
		if p.at > c {
			break
		}
		if kept < 0 || p.at-kept >= t.model.MinStep {
			kept, at = p.at, p.at
		}
	}
	return at
}

// foldPointKept reports whether the slot still holds the first
// checkpoint the engine took after the last fold (true before one).
func (s *Planner) foldPointKept() bool {
	t := &s.cache
	if t.foldPoint == 0 {
		return true
	}
	for _, p := range t.engine.points {
		if p.at == t.foldPoint {
			return true
		}
	}
	return false
}

// primer is the checkpoint request before a session's first request on
// an engine that restarts from checkpoints: a user message a little
// shorter than a micro-batch, so that the checkpoint the engine takes a
// micro-batch before its end lands just before the first message's text
// — where every later fold of the front changes the request. A full
// slot keeps its first checkpoint longest; without the primer that is
// the first request's, a micro-batch before its end, inside the fixed
// prefix, and each fold re-prefills the prefix's tail too.
func (s *Planner) primer() Message {
	m, _ := s.primerOf()
	return m
}

// primerOf is the primer and its length in the engine's tokens: sized by
// the engine's counts when CountPrimer took them, else as if " ok" were
// one token and PrimerText primerHead, as in the tokenizers of the
// common models. It falls a sixteenth of the micro-batch short of it,
// for the template's tokens around a message and a count that errs.
func (s *Planner) primerOf() (Message, int) {
	head, per64 := s.cache.primer.head, s.cache.primer.per64
	if head <= 0 || per64 <= 0 {
		head, per64 = primerHead, 64
	}
	ub := s.cache.model.Ubatch
	words := max((ub-ub/16-head)*64/per64, 0)
	return Message{Role: User, Content: PrimerText + strings.Repeat(" ok", words)}, head + words*per64/64
}

// CountPrimer takes the engine's own counts of PrimerText (head tokens)
// and of PrimerWords (per64), which size the primer. Counts that make a
// primer of less than half the micro-batch are not taken.
func (s *Planner) CountPrimer(head, per64 int) {
	ub := s.cache.model.Ubatch
	if head <= 0 || per64 <= 0 || head >= ub/2 || per64 >= ub {
		return
	}
	s.cache.primer.head, s.cache.primer.per64 = head, per64
}

// WantsPrimer reports whether the session's first request should be a
// primer: the engine restarts from checkpoints and has processed no
// request of this session yet.
func (s *Planner) WantsPrimer() bool {
	return s.cache.model.Class == CacheCheckpointed && s.cache.engine.n == 0 && !s.cache.warm
}

// Primer is the warm-up's message on an engine that restarts from
// checkpoints, and its length in the engine's tokens, for ObservePrimer.
// ok is false when no primer is wanted (WantsPrimer) or the engine's
// counts of it are not known (CountPrimer).
func (s *Planner) Primer() (m Message, tokens int, ok bool) {
	if !s.WantsPrimer() || s.cache.primer.per64 == 0 {
		return Message{}, 0, false
	}
	m, tokens = s.primerOf()
	return m, tokens, true
}

// PrimerText opens the primer and PrimerWords are 64 of the words that
// fill it: what the engine is asked to count to size it (Primer).
// primerHead is about PrimerText's length in tokens.
const (
	PrimerText = "This request only primes the engine's cache; no answer is needed."
	primerHead = 16
)

// PrimerWords is 64 of the primer's filling words.
var PrimerWords = strings.Repeat(" ok", 64)

// checkpointCut is where a checkpoint request after a fold ends: at the
// newest assistant message after the recap whose request's checkpoint,
// a micro-batch before its end, still lands before the recap's end; at
// the first one after the recap when none does. 0 when no assistant
// message follows the recap.
func (s *Planner) checkpointCut(msgs []Message) int {
	r := -1 // the view item that ends with the recap's text
	for k := range s.view.items {
		if of := s.view.items[k].of; of == frontRecap || of == middleRecap || of == s.fold.lead && of >= 0 {
			r = k
		}
	}
	if r < 0 || len(msgs) != s.view.Len() {
		return 0
	}
	bytes := s.cfg.PrefixChars + s.view.sizeBefore(r)
	end := bytes + s.view.items[r].size
	if of := s.view.items[r].of; of >= 0 {
		end = bytes + len(s.entries[of].lead) // the recap leads a user message
	}
	target := s.tokensIn(msgs, end)
	bytes += s.view.items[r].size
	cut := 0
	for j := r + 1; j < len(msgs); j++ {
		if msgs[j].Role == Assistant {
			lands := s.tokensIn(msgs, bytes)+1-s.cache.model.Ubatch <= target
			if lands || cut == 0 {
				cut = j
			}
			if !lands {
				break
			}
		}
		bytes += s.view.items[j].size
	}
	return cut
}
