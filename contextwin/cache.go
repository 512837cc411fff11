package contextwin

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// How an engine reuses its prompt cache when a request changes at token
// c of the one before. A dense model on llama.cpp (and Ollama) keeps any
// common prefix: it restarts at c. vLLM and SGLang keep whole blocks of
// the prefix: they restart at c rounded down to a block. A model whose
// state cannot be rolled back to an arbitrary token — sliding-window
// attention (Gemma 3, gpt-oss) or recurrent layers (Mamba, the gated
// DeltaNet hybrids) — restarts on llama.cpp from the newest context
// checkpoint at or before c, or from token 0.
//
// llama.cpp (build 11669) makes its checkpoints while it processes a
// prompt of n tokens, at n−4−n_ubatch and at n−4 (each only if the
// request processed that position), keeps at most --ctx-checkpoints of
// them per slot (a full slot drops the oldest that stands within
// --checkpoint-min-step of the one before it, else the oldest), and drops those after the
// restart point of a request that changed. A checkpoint taken at p holds
// the recurrent state at p, or the sliding window's cells up to p: it
// serves a change at c ≥ p. With no checkpoint, an SWA model still keeps
// its cache for a change within its window of the previous prompt's end.

// CacheClass names how an engine reuses its prompt cache.
type CacheClass string

const (
	// CacheUnknown is an engine not yet known: priced as dense until its
	// figures say otherwise.
	CacheUnknown CacheClass = "unknown"
	// CacheDense keeps any common prefix.
	CacheDense CacheClass = "dense"
	// CacheCheckpointed restarts at the newest checkpoint at or before
	// the change.
	CacheCheckpointed CacheClass = "checkpointed"
	// CacheBlocks keeps whole blocks of the common prefix.
	CacheBlocks CacheClass = "blocks"
)

// ParseCacheClass accepts a class's name; "" is CacheUnknown.
func ParseCacheClass(s string) (CacheClass, error) {
	switch c := CacheClass(strings.ToLower(strings.TrimSpace(s))); c {
	case "":
		return CacheUnknown, nil
	case CacheUnknown, CacheDense, CacheCheckpointed, CacheBlocks:
		return c, nil
	}
	return "", fmt.Errorf("unknown cache class %q: want dense, checkpointed, blocks or unknown", s)
}

// Defaults of llama.cpp and vLLM where a CacheModel field is 0.
const (
	DefaultCheckpoints = 32   // llama.cpp --ctx-checkpoints
	DefaultMinStep     = 8192 // llama.cpp --checkpoint-min-step
	DefaultUbatch      = 512  // llama.cpp --ubatch-size
	DefaultBlock       = 16   // vLLM --block-size
	// checkpointBack is how far before a prompt's end llama.cpp takes its
	// last checkpoint.
	checkpointBack = 4
)

// CacheModel is how one engine, serving one model, reuses its cache.
type CacheModel struct {
	Class CacheClass
	// SWA is a checkpointed model's sliding window in tokens; 0 for a
	// recurrent or hybrid one.
	SWA int
	// Checkpoints is the most checkpoints a slot keeps; 0 means
	// DefaultCheckpoints.
	Checkpoints int
	// MinStep is how close two checkpoints may stand before a full slot
	// drops the newer (--checkpoint-min-step); 0 means DefaultMinStep.
	MinStep int
	// Ubatch is the engine's micro-batch in tokens; 0 means DefaultUbatch.
	Ubatch int
	// Block is a block's size in tokens; 0 means DefaultBlock.
	Block int
}

func (m CacheModel) withDefaults() CacheModel {
	if m.Class == "" {
		m.Class = CacheUnknown
	}
	if m.Checkpoints <= 0 {
		m.Checkpoints = DefaultCheckpoints
	}
	if m.Ubatch <= 0 {
		m.Ubatch = DefaultUbatch
	}
	if m.MinStep <= 0 {
		m.MinStep = DefaultMinStep
	}
	if m.Block <= 0 {
		m.Block = DefaultBlock
	}
	return m
}

// String names the model as check and the status line do.
func (m CacheModel) String() string {
	switch {
	case m.Class == CacheCheckpointed && m.SWA > 0:
		return fmt.Sprintf("checkpointed (sliding window %d)", m.SWA)
	case m.Class == CacheCheckpointed:
		return "checkpointed (recurrent or hybrid)"
	case m.Class == CacheBlocks && m.Block > 0:
		return fmt.Sprintf("blocks of %d", m.Block)
	case m.Class == "":
		return string(CacheUnknown)
	}
	return string(m.Class)
}

// checkpoint is one context checkpoint of the engine's slot: the state
// at token at.
type checkpoint struct {
	at int
}

// engineCache mirrors what the engine holds for the session: the last
// prompt it processed, in tokens, and its checkpoints, oldest first.
type engineCache struct {
	n      int
	points []checkpoint
	// thinned are checkpoints the mirror dropped from a full slot, the
	// newest few: a restart at one says the engine keeps them closer
	// together than MinStep.
	thinned []checkpoint
}

// thinnedKept is how many dropped checkpoints the mirror remembers.
const thinnedKept = 64

// restart is where the engine starts prefilling a prompt that shares
// its first common tokens with the last one it processed.
func (m CacheModel) restart(c engineCache, common int) int {
	common = max(min(common, c.n), 0)
	switch m.Class {
	case CacheBlocks:
		return common / m.Block * m.Block
	case CacheCheckpointed:
		if common >= c.n || m.SWA > 0 && c.n-common <= m.SWA {
			return common
		}
		for i := len(c.points) - 1; i >= 0; i-- {
			if p := c.points[i].at; p <= common {
				return p
			}
		}
		return 0
	}
	return common
}

// processed records a prompt of n tokens the engine prefilled from
// token from: checkpoints after from are gone, and new ones are taken at
// from, n−4−ubatch and n−4. They are kept whatever the class, so that a
// restart at one of them tells a checkpointed engine; only a
// checkpointed one restarts at them.
func (m CacheModel) processed(c engineCache, from, n int) engineCache {
	keep := c.points[:0:0]
	for _, p := range c.points {
		if p.at <= from {
			keep = append(keep, p)
		}
	}
	for _, at := range []int{from, n - checkpointBack - m.Ubatch, n - checkpointBack} {
		if at >= from && at > 0 && at < n && (len(keep) == 0 || keep[len(keep)-1].at < at) {
			keep = append(keep, checkpoint{at: at})
		}
	}
	thinned := c.thinned
	for len(keep) > m.Checkpoints {
		var gone checkpoint
		keep, gone = m.thin(keep)
		thinned = append(thinned, gone)
	}
	if over := len(thinned) - thinnedKept; over > 0 {
		thinned = thinned[over:]
	}
	return engineCache{n: n, points: keep, thinned: thinned}
}

// thin drops one checkpoint of a full slot as llama.cpp does: the
// oldest that stands closer than MinStep to the one before it, else the
// oldest of all. So the first checkpoints of a session (the prefix's,
// a recap's) outlive a long run of small appends, whose checkpoints
// stand close together.
func (m CacheModel) thin(points []checkpoint) (kept []checkpoint, gone checkpoint) {
	for i := 1; i < len(points); i++ {
		if points[i].at-points[i-1].at < m.MinStep {
			gone = points[i]
			return slices.Delete(points, i, i+1), gone
		}
	}
	return points[1:], points[0]
}

// wasThinned reports whether the engine restarting at from restarted at a
// checkpoint the mirror had dropped.
func (c engineCache) wasThinned(from int) bool {
	for _, p := range c.thinned {
		if from > 0 && (from == p.at || from == p.at-1) {
			return true
		}
	}
	return false
}

// isCheckpoint reports whether the engine restarting at from for a
// change at common restarted at one of the checkpoints the mirror holds
// (a sliding-window model resumes one token before it), or at 0 with
// none before the change. (A dense engine that lost its cache to another
// client restarts at 0 too; the next event at its change corrects that.)
func (c engineCache) isCheckpoint(from, common int) bool {
	before := false
	for _, p := range c.points {
		if from > 0 && (from == p.at || from == p.at-1) {
			return true
		}
		before = before || p.at <= common
	}
	return from == 0 && !before
}

// cacheTrack is what the planner knows of the engine's cache: the model
// it prices events with, the mirror of the engine's slot, and the last
// request as sent, to find where the next one changes.
type cacheTrack struct {
	model  CacheModel
	engine engineCache
	// sent is the last request planned (its messages after the fixed
	// prefix); warm is set when it was the warm-up, which shares only the
	// prefix with what follows.
	sent []Message
	warm bool
	// queue is what is still to be sent of a plan that asked for
	// checkpoint requests: the rest of them, then its request; observed
	// and observedWarm are what sent and warm were for the last request
	// the engine answered, should one of them never be sent.
	queue        [][]Message
	observed     []Message
	observedWarm bool
	// common is how many tokens the last request planned shares with the
	// prompt the engine processed before it.
	common int
	// marks are where the prompt the engine processed last ends a
	// message, in bytes and the engine's own tokens, at the ends of the
	// requests it processed that the prompt still starts with: a change
	// point counted from the mark before it is off by the few tokens
	// the estimate errs on the bytes after the mark, not on the whole
	// prompt.
	marks []tokenMark
	// sizes sums the requests' sizes (sentBytes) from where the last sum
	// of the same array ended.
	sizes sizeMemo
	// foldPoint is the first checkpoint the engine took after the last
	// fold (the place a steady part's checkpoint would stand); watch is
	// set until the request that takes it is seen. A fold whose
	// foldPoint the slot no longer holds says that checkpoints taken at a
	// fold do not outlive the requests until the next one.
	foldPoint int
	watch     bool
	// primer is the engine's counts of PrimerText and PrimerWords, 0
	// when not known (CountPrimer).
	primer struct{ head, per64 int }
	// noPrefill is set once the engine refused a checkpoint request
	// ending in an assistant message (RefusedPrefill), or did not go on
	// from it; prefilled is that request's length while the next is
	// awaited, else 0.
	noPrefill bool
	prefilled int
	// why says what taught the model, when the engine's figures did;
	// seen counts the restarts at a checkpoint before a change while the
	// model was not checkpointed.
	why  string
	seen int
}

// tokenMark is a place in the prompt the engine processed: so many bytes
// (the fixed prefix and the messages as sizeOf counts them) are so many
// of its tokens.
type tokenMark struct{ bytes, tokens int }

// promptTail is what a chat template adds after a request's last message,
// in tokens: the assistant's header the engine generates after.
const promptTail = 2

// marksKept is how many marks the mirror keeps: a long run of appends
// leaves one a request.
const marksKept = 512

// tokensAt is the engine's token position of byte position at (the fixed
// prefix included) of a prompt that starts with the same bytes as the
// one it processed last: counted between the marks around it, at their
// density, or from the last mark at the estimate's.
func (s *Planner) tokensAt(at int) int {
	marks := s.cache.marks
	i, _ := slices.BinarySearchFunc(marks, at+1, func(m tokenMark, at int) int { return m.bytes - at })
	lo := tokenMark{}
	if i > 0 {
		lo = marks[i-1]
	}
	switch {
	case i < len(marks):
		hi := marks[i]
		return lo.tokens + int(int64(at-lo.bytes)*int64(hi.tokens-lo.tokens)/int64(hi.bytes-lo.bytes))
	case i == 0:
		return s.est.Known(at)
	}
	return lo.tokens + s.est.Known(at-lo.bytes)
}

// tokensIn is tokensAt for a byte position of msgs: counted by the marks
// up to where msgs stop being the prompt the engine processed last, and
// at the estimate's density after it.
func (s *Planner) tokensIn(msgs []Message, at int) int {
	shared, _ := s.commonBytes(msgs)
	if at <= shared {
		return s.tokensAt(at)
	}
	return s.tokensAt(shared) + s.est.Known(at-shared)
}

// mark records the prompt the engine just processed, of n tokens: the
// marks its messages share with the prompt before stay, and its end is
// one more.
func (s *Planner) mark(n int) {
	t := &s.cache
	shared, all := s.commonBytesWith(t.observed, t.observedWarm, t.sent)
	if all {
		shared = s.sentBytes(t.observed)
	}
	keep := t.marks[:0]
	for _, m := range t.marks {
		if m.bytes <= shared {
			keep = append(keep, m)
		}
	}
	end := tokenMark{bytes: s.sentBytes(t.sent), tokens: n - promptTail}
	if len(keep) == 0 || keep[len(keep)-1].bytes < end.bytes && keep[len(keep)-1].tokens < end.tokens {
		keep = append(keep, end)
	}
	if over := len(keep) - marksKept; over > 0 {
		keep = slices.Delete(keep, 1, 1+over) // the prefix's stays
	}
	t.marks = keep
}

// sentBytes is the size of the fixed prefix and msgs.
func (s *Planner) sentBytes(msgs []Message) int {
	return s.cfg.PrefixChars + s.cache.sizes.of(msgs)
}

// sizeMemo remembers the size of the last two message lists it was asked
// about, the requests the mirror compares (the one sent and the one
// observed), so that a list that extends one of them — the view lends
// its array, and a request is the last one's array with messages after —
// is summed from where that one ended: a plan costs what it added.
type sizeMemo [2]struct {
	first *Message
	n     int
	bytes int
}

// of is the sum of sizeOf over msgs.
func (m *sizeMemo) of(msgs []Message) int {
	if len(msgs) == 0 {
		return 0
	}
	k, from, n := 1, 0, 0
	for j := range m {
		if e := m[j]; e.first == &msgs[0] && e.n <= len(msgs) && e.n >= from {
			k, from, n = j, e.n, e.bytes
		}
	}
	for _, msg := range msgs[from:] {
		n += sizeOf(msg)
	}
	m[1-k] = m[k]
	m[k] = struct {
		first *Message
		n     int
		bytes int
	}{&msgs[0], len(msgs), n}
	return n
}

// commonBytes is how many bytes msgs, the fixed prefix included, share
// with the request last planned; all is set when msgs start with the
// whole of it.
func (s *Planner) commonBytes(msgs []Message) (bytes int, all bool) {
	return s.commonBytesWith(s.cache.sent, s.cache.warm, msgs)
}

// commonBytesWith is how many bytes msgs share with the request of sent
// (the warm-up's when warm).
func (s *Planner) commonBytesWith(sent []Message, warm bool, msgs []Message) (bytes int, all bool) {
	bytes = s.cfg.PrefixChars
	if warm {
		return bytes, false
	}
	if len(sent) > 0 && len(sent) <= len(msgs) && &sent[0] == &msgs[0] {
		// The same array the view lent: the same messages (View.msgs).
		return s.sentBytes(sent), true
	}
	for i, m := range sent {
		if i >= len(msgs) || !sameMessage(m, msgs[i]) {
			if i < len(msgs) && m.Role == msgs[i].Role {
				bytes += commonPrefix(m.Content, msgs[i].Content)
			}
			return bytes, false
		}
		bytes += sizeOf(m)
	}
	return bytes, true
}

// CacheModel is how the planner believes the engine reuses its cache,
// and, when the engine's figures taught it, why.
func (s *Planner) CacheModel() (m CacheModel, why string) {
	return s.cache.model, s.cache.why
}

// commonTokens is how many tokens msgs, after the fixed prefix, share
// with the request the engine processed last, as far as the planner can
// tell: the bytes before the first message that differs, in tokens.
func (s *Planner) commonTokens(msgs []Message) int {
	t := &s.cache
	if t.engine.n == 0 {
		return 0
	}
	if t.warm {
		return min(s.prefixCount(), t.engine.n)
	}
	bytes, all := s.commonBytes(msgs)
	if all {
		return t.engine.n // an append of the last request
	}
	return min(s.tokensAt(bytes), t.engine.n)
}

// sameMessage reports whether two messages render the same.
func sameMessage(a, b Message) bool {
	return a.Role == b.Role && a.Content == b.Content && a.Reasoning == b.Reasoning &&
		a.ToolCallID == b.ToolCallID && slices.Equal(a.ToolCalls, b.ToolCalls)
}

// commonPrefix is the length in bytes of the longest common prefix of a
// and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// planned records the request about to be sent.
func (s *Planner) planned(msgs []Message) {
	t := &s.cache
	t.common = s.commonTokens(msgs)
	t.sent, t.warm = msgs, false
}

// plannedWith records the request about to be sent, and the checkpoint
// requests to go before it, in order.
func (s *Planner) plannedWith(msgs []Message, checkpoints [][]Message) {
	t := &s.cache
	if len(checkpoints) == 0 {
		t.queue = nil
		s.planned(msgs)
		return
	}
	t.queue = append(slices.Clone(checkpoints[1:]), msgs)
	s.planned(checkpoints[0])
}

// plannedFresh is plannedWith for a plan whose first checkpoint request
// goes without the prompt cache: the engine restarts it at token 0.
func (s *Planner) plannedFresh(msgs []Message, checkpoints [][]Message) {
	s.plannedWith(msgs, checkpoints)
	s.cache.common = 0
}

// ObserveCheckpoint takes the engine's figures for the next checkpoint
// request a plan asked for (Plan.Checkpoints), sent before its request.
func (s *Planner) ObserveCheckpoint(u Usage) {
	t := &s.cache
	if len(t.queue) == 0 {
		return
	}
	next := t.queue[0]
	t.queue = t.queue[1:]
	if m, tokens, ok := s.Primer(); ok && len(t.sent) == 1 && t.sent[0].Role == m.Role && t.sent[0].Content == m.Content {
		// The session's first request was the primer alone, sized by the
		// engine's counts: it is the warm-up, and taken as one
		// (ObservePrimer), so that the prefix's end is counted as the
		// engine counts it, not where the density of the request after it
		// puts it.
		s.observePrefix(msgOverhead, tokens, u)
	} else {
		s.observeCache(u)
	}
	s.planned(next)
	if len(t.queue) == 0 {
		t.queue = nil
	}
}

// settleQueue forgets the checkpoint requests that were never sent: the
// request itself changes from the last one the engine processed.
func (s *Planner) settleQueue() {
	t := &s.cache
	if len(t.queue) == 0 {
		return
	}
	// Some were never sent: the request changes from the last one the
	// engine processed.
	t.sent, t.warm = t.observed, t.observedWarm
	s.planned(t.queue[len(t.queue)-1])
	t.queue = nil
}

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

// restartExtra is how many tokens before a change at byte position at
// (the fixed prefix included) the engine prefills again anyway: the
// distance back to where it restarts.
func (s *Planner) restartExtra(at int) int {
	t := &s.cache
	c := min(s.tokensAt(at), t.engine.n)
	return c - t.model.restart(t.engine, c)
}

// observeCache mirrors what the engine did with the last request: it
// restarted at the figure it reported (else where the model says) and
// took its checkpoints. A restart the model did not predict corrects the
// model: an engine that restarts well before the change keeps
// checkpoints; one that restarts at the change where the model said it
// could not keeps any prefix.
func (s *Planner) observeCache(u Usage) {
	t := &s.cache
	if u.PromptTokens <= 0 {
		return
	}
	if t.prefilled > 0 && u.CachedKnown && u.Cached+8 < t.prefilled {
		// The request after one ending in an assistant message did not go
		// on from it: the engine closed that message.
		t.noPrefill = true
	}
	t.prefilled = 0
	if n := len(t.sent); n > 0 && t.sent[n-1].Role == Assistant { // a prefill: the next request goes on from it
		t.prefilled = u.PromptTokens
	}
	predicted := t.model.restart(t.engine, t.common)
	from := predicted
	if u.CachedKnown {
		from = max(min(u.Cached, u.PromptTokens), 0)
		s.learnCache(from, predicted)
	}
	t.engine = t.model.processed(t.engine, from, u.PromptTokens)
	if t.watch {
		t.watch = false
		for _, p := range t.engine.points {
			if p.at > from {
				t.foldPoint = p.at
				break
			}
		}
	}
	s.mark(u.PromptTokens)
	t.observed, t.observedWarm = t.sent, t.warm
}

// swaReach is the widest sliding window of the common models, in
// tokens (Gemma 2 and Mistral's 4096; Gemma 3's is 1024, gpt-oss's 128).
const swaReach = 4096

// learnCache compares where the engine restarted with the change point
// and with what the model predicted. The change point is an estimate
// (within a few percent, more where a recap's text is denser than the
// rest), so a restart counts as before it only at one of the mirror's
// checkpoints, exactly: a dense engine restarts at the change, which is
// no checkpoint but by chance.
func (s *Planner) learnCache(from, predicted int) {
	t := &s.cache
	defer func(was CacheClass) {
	}(t.model.Class)
	if t.engine.n == 0 || t.common >= t.engine.n {
		return // the first request, or an append: every class reuses it whole
	}
	if t.model.Class == CacheCheckpointed && from > predicted && from+32 < t.common && t.engine.wasThinned(from) && t.model.MinStep > 1 {
		// (Well before the change: at one the estimate of the change
		// point placed too early, the mirror's own may stand just
		// after, and a checkpoint long thinned may have stood at the
		// same token.)
		// The engine kept a checkpoint the mirror thinned out: its
		// --checkpoint-min-step is smaller than the mirror's.
		t.model.MinStep /= 2
		t.why = fmt.Sprintf("the engine restarted at token %d, a checkpoint a full slot keeps only with --checkpoint-min-step below %d", from, 2*t.model.MinStep)
		return
	}
	tol := 64 + t.common*15/100
	switch {
	case from+tol < t.common && t.engine.isCheckpoint(from, t.common) && t.model.Class != CacheBlocks:
		// Twice: once may be a coincidence (a change the estimate placed
		// late, at a place where a checkpoint would stand).
		if t.model.Class != CacheCheckpointed {
			if t.seen++; t.seen >= 2 {
				t.model.Class = CacheCheckpointed
				t.why = fmt.Sprintf("the engine restarted at its checkpoint at token %d for a change at about %d", from, t.common)
			}
		}
	case from+tol >= t.common && predicted+tol < t.common && t.model.Class == CacheCheckpointed && !t.engine.isCheckpoint(from, t.common) &&
		t.engine.n-t.common > swaReach:
		// (A sliding-window model restarts at a change within its window
		// of the prompt's end too: only a change farther back tells.)
		t.model.Class = CacheDense
		t.why = fmt.Sprintf("the engine kept its cache up to token %d for a change at about %d, with no checkpoint there", from, t.common)
	case from+tol >= t.common && t.model.Class == CacheUnknown && !t.engine.isCheckpoint(from, t.common):
		// (At one of the mirror's checkpoints a checkpointed engine
		// restarts too: no sign.)
		t.model.Class = CacheDense
		t.why = fmt.Sprintf("the engine kept its cache up to the change at about token %d", t.common)
	}
}

// observeWarm mirrors the warm-up: the fixed prefix and a short message,
// of which what follows shares only the prefix.
func (s *Planner) observeWarm(u Usage) {
	t := &s.cache
	t.common = min(s.prefixCount(), t.engine.n)
	s.observeCache(u)
	t.sent, t.warm = nil, true
	t.observed, t.observedWarm = nil, true
	if u.PromptTokens > 0 {
		t.marks = []tokenMark{{bytes: s.cfg.PrefixChars, tokens: s.prefixCount()}}
	}
}

// refused forgets the request the engine refused as too long: it
// processed none of it, so the next request changes from the one before.
func (s *Planner) refused() {
	t := &s.cache
	t.sent, t.warm, t.queue = t.observed, t.observedWarm, nil
}
