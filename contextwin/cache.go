package contextwin

import (
	"fmt"
	"slices"
	"strings"
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
	// CacheBoundary keeps its state only at the last block boundary of
	// each prompt it processed: vLLM serving a hybrid model (the gated
	// DeltaNet of Qwen3.5, Mamba layers) under --mamba-cache-mode align.
	// It restarts at the newest such boundary at or before the change, an
	// append included.
	CacheBoundary CacheClass = "boundary"
)

// ParseCacheClass accepts a class's name; "" is CacheUnknown.
func ParseCacheClass(s string) (CacheClass, error) {
	switch c := CacheClass(strings.ToLower(strings.TrimSpace(s))); c {
	case "":
		return CacheUnknown, nil
	case CacheUnknown, CacheDense, CacheCheckpointed, CacheBlocks, CacheBoundary:
		return c, nil
	}
	return "", fmt.Errorf("unknown cache class %q: want dense, checkpointed, blocks, boundary or unknown", s)
}

// Defaults of llama.cpp and vLLM where a CacheModel field is 0.
const (
	DefaultCheckpoints = 32   // llama.cpp --ctx-checkpoints
	DefaultMinStep     = 8192 // llama.cpp --checkpoint-min-step
	DefaultUbatch      = 512  // llama.cpp --ubatch-size
	DefaultBlock       = 16   // vLLM --block-size
	// DefaultBoundaryBlock is a CacheBoundary model's block where none is
	// told or learnt: vLLM grows a hybrid model's block until its
	// attention page is as large as the recurrent state's, 528 to 2048
	// tokens by model; this is a middle one.
	DefaultBoundaryBlock = 1024
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
		if m.Class == CacheBoundary {
			m.Block = DefaultBoundaryBlock
		}
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
	case m.Class == CacheBoundary && m.Block > 0:
		return fmt.Sprintf("last block boundary only (blocks of %d)", m.Block)
	case m.Class == CacheBoundary:
		return "last block boundary only"
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
	case CacheBoundary:
		return c.pointAtOrBefore(common)
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
	if m.Class == CacheBoundary {
		return m.processedAtBoundary(c, from, n)
	}
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
	// notePlant is a note round's checkpoint request (noteCheckpoint):
	// asked is set from the plan to its figures, tokens its length from
	// its figures to the note round's, and failed once a note round
	// restarted well before its end.
	notePlant struct {
		asked  bool
		tokens int
		failed bool
	}
	// why says what taught the model, when the engine's figures did;
	// seen counts the restarts at a checkpoint before a change while the
	// model was not checkpointed.
	why  string
	seen int
	// boundary is the greatest common divisor of the restarts of appends
	// short of their ends (learnBoundary), how many there were, and the
	// last of them.
	boundary struct{ g, seen, last int }
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
	if np := &t.notePlant; np.asked {
		np.asked, np.tokens = false, u.PromptTokens
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
func (s *Planner) observeCache(u Usage) (from int) {
	t := &s.cache
	if u.PromptTokens <= 0 {
		return 0
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
	from = predicted
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
	return from
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
	if s.learnBoundary(from, predicted) {
		return
	}
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
	case from+tol < t.common && t.engine.isCheckpoint(from, t.common) && t.model.Class != CacheBlocks && t.model.Class != CacheBoundary:
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

// ModelChanged tells the planner that another model answers the
// conversation from the next request on: the engine holds nothing of it,
// the fixed prefix included, and prefills all of it again. As after
// SlotTaken, the next Plan takes its fold now, where the request holds
// more than half the usable room and a fold would replace enough, while
// that prefill is paid anyway. It reports whether it will.
func (s *Planner) ModelChanged() bool {
	s.sync()
	t := &s.cache
	t.engine = engineCache{}
	t.sent, t.warm, t.queue = nil, false, nil
	t.observed, t.observedWarm = nil, false
	t.marks = nil
	return s.foldWhilePaid()
}

// SetModel makes the planner plan for another model from the next
// request on: window tokens (0 keeps the window it had: the engine gave
// none for the model), its output limit and how the engine reuses its
// cache for it, as the engine tells (what the figures taught of the last
// model's cache is forgotten). It changes nothing else: a switch after
// the first request is also a ModelChanged, which the caller makes after
// it, so that the fold it may ask for is judged in the new window.
func (s *Planner) SetModel(window, outputLimit int, cache CacheModel) {
	if window > 0 {
		s.cfg.Window = window
	}
	s.cfg.OutputLimit = max(outputLimit, 0)
	s.cfg.Cache = cache
	t := &s.cache
	t.model, t.why, t.seen = cache.withDefaults(), "", 0
	t.foldPoint, t.watch = 0, false
}

// prefixChanged takes a new fixed prefix of n bytes in front of the
// request being planned: the engine prefills it and all after it (where
// in the prefix the change starts depends on the chat template; the
// planner counts from none).
func (s *Planner) prefixChanged(n int) {
	s.SetPrefixChars(n)
	t := &s.cache
	t.engine = engineCache{}
	t.marks = nil
}

// foldWhilePaid asks the next Plan for a fold, as Compact does, where the
// request holds more than half the usable room and a fold would replace
// enough: the engine prefills the whole request anyway. It reports
// whether it will.
func (s *Planner) foldWhilePaid() bool {
	if s.cfg.Window <= 0 || !s.foldable() || s.foldableTokens() < minCompact || s.likely() <= s.Budget().Usable/2 {
		return false
	}
	s.note.compact = true
	return true
}

// SlotTaken tells the planner that another conversation with the same
// fixed prefix used the engine's slot since the last request it planned
// (a subagent's, where the engine has a single slot): the engine holds the
// prefix and nothing of this conversation after it, so the next request
// prefills all of that again, whatever it carries. Where the request holds
// more than half the usable room and a fold would replace enough, the next
// Plan takes its fold now, as after Compact, while that prefill is paid
// anyway, rather than pay it a second time at the event to come. It
// reports whether it will.
func (s *Planner) SlotTaken() bool {
	s.sync()
	t := &s.cache
	prefix := s.prefixCount()
	t.engine.n = min(t.engine.n, prefix)
	var kept []checkpoint
	for _, p := range t.engine.points {
		if p.at <= prefix {
			kept = append(kept, p)
		}
	}
	t.engine.points = kept
	t.sent, t.warm, t.queue = nil, true, nil
	t.observed, t.observedWarm = nil, true
	t.marks = []tokenMark{{bytes: s.cfg.PrefixChars, tokens: prefix}}
	return s.foldWhilePaid()
}
