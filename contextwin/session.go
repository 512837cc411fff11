package contextwin

// msgOverhead is what a chat template adds around each message (role
// markers, separators), in bytes at the baseline: about four tokens.
const msgOverhead = 16

// Config sets up a Planner.
type Config struct {
	// Window is W in tokens; 0 means no known window: nothing is shed, cut
	// or folded, and older tool results collapse to their summaries every
	// round.
	Window int
	// Reserve pins the reply reserve (REIKA_MIN_GEN_TOKENS); 0 learns it.
	Reserve int
	// MaxTokens caps max_tokens (REIKA_MAX_TOKENS); OutputLimit is the
	// catalog's output limit. 0 means no cap.
	MaxTokens, OutputLimit int
	// PrefixChars is the size in bytes of the fixed prefix the agent puts
	// before the messages: system prompt, tool definitions, bootstrap.
	PrefixChars int
	// Reasoning is what the engine's chat template renders of the
	// reasoning sent back (reasoning.go): what the requests carry of it,
	// and so what the budget counts.
	Reasoning ReasoningTemplate
	// ReasoningRounds is, with no window, how many of the newest assistant
	// messages keep their reasoning.
	ReasoningRounds int
	// Minimal leaves the repo map out (Budget.RepoMapChars is 0): the
	// window is too small for it to be worth its room.
	Minimal bool
	// MapChars, when MapCharsSet, fixes the repo map's size in characters
	// (REIKA_REPO_MAP_BUDGET; 0 leaves the map out). Unset, the map takes
	// the window's share (RepoMapChars).
	MapChars    int
	MapCharsSet bool
	// MapUpdate, when set, is asked at a fold what the repo map has learnt
	// since the fixed prefix was built; the recap carries it, after the
	// request's change point, so the prefix itself never changes.
	MapUpdate func() string
	// PrefixAtFold, when set, is asked at a fold — which rewrites the
	// request after the fixed prefix anyway — whether the agent puts a
	// new fixed prefix in front of it (new tool definitions): its size in
	// bytes, and true when it does. It is asked at no other plan, so that
	// the prefix never changes where the request would have been an
	// append. The planner then counts the new prefix as unsent and the
	// engine's cache as holding nothing of the request.
	PrefixAtFold func() (chars int, ok bool)
	// TargetFraction is the shed target as a share of the shed point; 0
	// means 0.7. It is held within 0.3…0.95: above that an event sheds
	// almost nothing and fires again on the next round.
	TargetFraction float64
	// DecodeCost is how many prompt tokens the engine prefills in the time
	// it generates one; the planner counts a note round's note at it. 0
	// means DefaultDecodeCost; negative counts generated tokens as free.
	DecodeCost float64
	// Cache is how the engine reuses its prompt cache, as far as it is
	// known at the start (the class from the engine's own description);
	// the engine's figures correct it.
	Cache CacheModel
}

// Usage is what the engine reported for a request.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	FinishReason     string
	// Cached is how many prompt tokens the engine reused from its cache
	// (llama.cpp's timings.cache_n, usage.prompt_tokens_details.cached_tokens),
	// when CachedKnown: the engine said.
	Cached      int
	CachedKnown bool
}

// Planner is the context state of one agent session: every message it
// has seen, how each stands in the request (whole, shed to its summary,
// cut to fit), the recaps, and what has been learned about the engine's
// tokens. The agent appends messages, asks for a Plan before each request
// and reports the engine's figures with Observe.
//
// Its state is grouped by concern: the transcript (what was appended and
// how each message stands), the view (what the next request carries, with
// its totals), the folds (what the recaps stand for), the note round, the
// task election, the last request and the fixed prefix. The view keeps
// its own totals (see view), and the planner counts them with its drift;
// what no type holds — that an entry's figures match its item's, that a
// request is an append of the one before except at an event — the
// planner keeps and the invariant test checks.
//
// A Planner is not safe for concurrent use.
type Planner struct {
	cfg Config
	est Estimator
	res Reserve

	transcript
	view   View         // what the next request carries after the fixed prefix
	fold   folds        // what the recaps stand for
	note   noteRound    // the note asked for before a fold
	task   taskElection // the result that defines the task
	last   lastRequest  // the last request planned, and its answer
	prefix prefixState  // the fixed prefix, as the engine knows it
	drift  drift        // what the planner counts beyond the view's totals
	cache  cacheTrack   // how the engine reuses its cache, and what it holds
	users  userIndex    // the user's messages, for what the recap carries of them
}

// drift is what the planner counts of the view beyond its totals, until
// the next rebuild: a change to an entry the view no longer holds (the
// task's payload cut after a fold took it into the recap) and, when a
// request carried such an entry, its fresh bytes taken off. It keeps the
// planner's figures what they were before the view kept its own totals;
// whether these bytes should count at all is a question for a change of
// behaviour, not for this one.
type drift struct {
	size, fresh int
}

// counted is the view's size and fresh bytes as the planner counts them:
// its totals, and the drift.
func (s *Planner) counted() (size, fresh int) {
	return s.view.size + s.drift.size, s.view.fresh + s.drift.fresh
}

// View is what the next request carries after the fixed prefix, as the
// planner stands now. It is read-only and changes with the planner's next
// call; its Messages are a copy the caller owns.
func (s *Planner) View() *View { return &s.view }

// countedSize is the view's size as the planner counts it.
func (s *Planner) countedSize() int { return s.view.size + s.drift.size }

// transcript is every message appended and how each stands: log is
// append-only and entries is in step with it.
type transcript struct {
	log     []Message
	entries []entry
	sent    int // entries [0, sent) existed when the engine last answered
	synced  int // entries [0, synced) have been placed in the view
	// dirty lists the entries that hold bytes no request has carried.
	dirty     []int
	lastUser  int // the newest user message, -1 none
	collapsed int // no window: entries before this have collapsed

	// lastQuery is the newest user message that does not follow a tool
	// result, -1 none: what a turn template renders reasoning after
	// (the agent sends one that does inside that result: RidesResult).
	lastQuery int
	// carryFrom is the entry from which a turn template's requests carry
	// the turn's reasoning back, -1 before the turn's carryRounds-th
	// reply (carriesReasoning); turnReplies counts the turn's replies.
	carryFrom, turnReplies int
}

// folds is what folding has done: which entries the recaps stand for, and
// the recaps themselves. Entries before upTo are folded into the front
// recap; entries [midFrom, midTo) into the middle recap, which stands in
// the view after the older turns [upTo, midFrom), left as they were sent,
// and before the newest (midTo is 0 when there is none).
type folds struct {
	upTo           int
	midFrom, midTo int
	lead           int // the entry the front recap leads, -1 when it stands alone
	// split is set when the front recap is two messages: its steady part
	// the user's, the rest leading the first kept message, the
	// assistant's (see splitFront).
	split bool
	// frontMoved is set when the last fold was of the front recap (not into
	// the middle one).
	frontMoved bool
	// kept is how many bytes of the front recap's text after its steady
	// part the last rewrite kept of the one before, to a line's end.
	kept       int
	front, mid CarriedRecap
	recap      *Recap // the current recap, nil before the first fold
	mapSent    string // the map update the front recap carries
	rewrote    bool   // the last fold rewrote the front recap (not appended to it, not the middle one)
	reset      bool   // the last fold started a middle recap over the engine's cache (option.reset)
	// folds and fronts count the folds so far, and of them the folds of
	// the front.
	folds, fronts int
}

// CarriedRecap is one recap as the request carries it: the front recap
// (after the fixed prefix, alone or leading the first kept user message)
// or the middle one; its message is empty when there is none. verbatim
// is how many bytes of it were carried before (what the user said and the
// task's payload, word for word, and for an appended recap the old one);
// text is the size of its own text, its verbatim parts aside: what the
// recap budget bounds, the two recaps together. steady (the front's only)
// is how many bytes open it and stay the same when the next fold rewrites
// it: the preamble and what the user said.
type CarriedRecap struct {
	msg      Message
	verbatim int
	text     int
	steady   int
}

// noteRound is the note asked for before a fold: text is the model's note
// for the coming fold, asked that the note round was planned, compact that
// a fold was asked for (Compact), held that the fold waits for the next
// round (see shrink).
type noteRound struct {
	text    string
	asked   bool
	compact bool
	held    bool
	whole   bool // the note round carried the request as it stands
	tokens  int  // the last note's length in tokens, 0 before the first
}

// taskElection is the result elected as the one that defines the task:
// payload is its entry (-1 none), turn the user entry that opened the turn
// it was elected in.
type taskElection struct {
	payload, turn int
}

// lastRequest is what the planner remembers of the last request planned.
type lastRequest struct {
	chars       int  // bytes of it, the fixed prefix included
	carriedUpTo int  // entries before this were in it
	reported    int  // prompt tokens the engine reported for it
	emergency   bool // an emergency fold since the engine last answered
}

// prefixState is the fixed prefix as the engine knows it: sent once a
// request carried it; reported is the engine's count of it (from the
// warm-up), 0 when it gave none.
type prefixState struct {
	sent     bool
	reported int
}

// entry is how one transcript message stands.
type entry struct {
	form          form
	text          string // the content when form is not whole
	reasoningShed bool
	notice        string // appended to the content: shed and gap notices
	lead          string // put before the content: the recap, at a fold

	// size is the bytes of its rendering, fresh how many of them no
	// request has carried yet.
	size, fresh int

	// The summary, computed once when first needed.
	summary     string
	keep        bool
	summaryDone bool
}

// summarize returns entry i's summary, computing it once.
func (s *Planner) summarize(i int) (string, bool) {
	e := &s.entries[i]
	if !e.summaryDone {
		e.summary, e.keep = Summarize(s.log[i])
		e.summaryDone = true
	}
	return e.summary, e.keep
}

type form uint8

const (
	whole form = iota
	summarized
	cutToFit
	continuationShed
)

// NewPlanner starts the planner of a session.
func NewPlanner(cfg Config) *Planner {
	if cfg.Window < 0 {
		cfg.Window = 0
	}
	if cfg.TargetFraction == 0 {
		cfg.TargetFraction = 0.7
	}
	cfg.TargetFraction = min(max(cfg.TargetFraction, 0.3), 0.95)
	return &Planner{
		cfg: cfg, res: Reserve{Pinned: cfg.Reserve},
		transcript: transcript{lastUser: -1, lastQuery: -1, carryFrom: -1},
		view:       newView(),
		fold:       folds{lead: -1},
		task:       taskElection{payload: -1, turn: -1},
		cache:      cacheTrack{model: cfg.Cache.withDefaults()},
	}
}

// Append adds a message to the session. Tool results are appended after
// the assistant message that called them.
func (s *Planner) Append(m Message) {
	if m.Role == User {
		s.lastUser = len(s.log)
		if !RidesResult(s.log, m) {
			s.lastQuery = len(s.log)
			s.carryFrom, s.turnReplies = -1, 0
		}
	}
	if m.Role == Assistant {
		if s.turnReplies++; s.turnReplies == carryRounds {
			s.carryFrom = len(s.log)
		}
	}
	s.log = append(s.log, m)
	s.entries = append(s.entries, entry{})
}

// Len is the number of messages appended so far.
func (s *Planner) Len() int { return len(s.entries) }

// Budget is the current division of the window; zero with no window.
// With no window only the repo map's size is set.
func (s *Planner) Budget() Budget {
	if s.cfg.Window <= 0 {
		return Budget{RepoMapChars: s.cfg.RepoMapBudget()}
	}
	b := NewBudget(s.cfg.Window, s.res.Tokens(s.cfg.Window))
	if s.cfg.TargetFraction != 0.7 {
		b.ShedTarget = int(float64(b.ShedPoint) * s.cfg.TargetFraction)
	}
	b.RepoMapChars = s.cfg.RepoMapBudget()
	return b
}

// RepoMapBudget is the repo map's size in characters: none in minimal
// mode, else the setting when there is one, else the window's share (the
// smallest share when the window is unknown).
func (c Config) RepoMapBudget() int {
	switch {
	case c.Minimal:
		return 0
	case c.MapCharsSet:
		return max(c.MapChars, 0)
	}
	return RepoMapChars(c.Window)
}

// Window is the window the session works within; 0 when unknown.
func (s *Planner) Window() int { return s.cfg.Window }

// SetPrefixChars records a new size of the fixed prefix (the agent rebuilt
// it at a shrink event).
func (s *Planner) SetPrefixChars(n int) {
	s.cfg.PrefixChars = n
	s.prefix.sent = false
	s.prefix.reported = 0
}

// Estimator returns what has been learned about the engine's tokens.
func (s *Planner) Estimator() Estimator { return s.est }

// Observe takes the engine's figures for the request last planned: the
// prompt count teaches the token ratio, the completion the reserve. It
// says what the estimator made of the count (see Estimator.Learn): only a
// learned one teaches; a missing one keeps the estimate cautious; a
// truncated one is an engine that silently dropped part of the prompt; an
// outlier is a count the history does not support.
func (s *Planner) Observe(u Usage) Figure {
	fig := s.est.Learn(s.last.chars, u.PromptTokens)
	s.last.reported = 0
	if fig == Learned {
		s.last.reported = u.PromptTokens
	}
	s.res.Observe(u.CompletionTokens, u.FinishReason)
	s.settleQueue()
	s.learnNotePlant(s.observeCache(u), u)
	// What the request carried is no longer new: everything, or for a
	// note round only what came before the current round.
	bound := s.last.carriedUpTo
	kept := s.dirty[:0]
	for _, i := range s.dirty {
		if i < bound {
			if k := s.view.find(i); k >= 0 {
				s.view.carry(k)
			} else {
				s.drift.fresh -= s.entries[i].fresh
			}
			s.entries[i].fresh = 0
		} else if s.entries[i].fresh > 0 {
			kept = append(kept, i)
		}
	}
	s.dirty = kept
	for _, r := range []int{frontRecap, middleRecap} {
		if k := s.view.find(r); k >= 0 {
			s.view.carry(k)
		}
	}
	s.prefix.sent = true
	s.sent = max(s.sent, bound)
	s.last.emergency = false
	return fig
}

// Chip is the status line's view of the last request: the engine's own
// count when it gave one, else the estimate.
func (s *Planner) Chip() Chip {
	size := s.last.reported
	if size == 0 {
		size = s.estimate()
	}
	return NewChip(size, s.Budget())
}

// Recap returns the current recap, nil before the first fold.
func (s *Planner) Recap() *Recap { return s.fold.recap }

// --- the view ---

// render is entry i as the view carries it.
func (s *Planner) render(i int) Message {
	e := &s.entries[i]
	m := s.log[i]
	if e.form != whole {
		m.Content = e.text
	}
	if e.reasoningShed || s.fold.split && i == s.fold.lead || !s.carriesReasoning(i) {
		// (The message the recap's rest leads goes without its
		// reasoning: a prefill renders an assistant message's text
		// alone, and the checkpoint request of the rest must be the
		// start of this request.)
		m.Reasoning = ""
	}
	m.Rides = s.cfg.Reasoning == ReasoningTurn && i > 0 && RidesResult(s.log[:i], m)
	if e.lead != "" {
		m.Content = e.lead + m.Content
	}
	if e.notice != "" {
		m.Content += e.notice
	}
	return m
}

// sizeOf is the size in bytes of a rendered message.
func sizeOf(m Message) int {
	n := len(m.Content) + reasoningBytes(m.Reasoning) + msgOverhead + len(m.Images)*ImageBytes
	for _, c := range m.ToolCalls {
		n += len(c.ID) + len(c.Name) + len(c.Arguments) + msgOverhead
	}
	return n
}

// sync places the entries appended since the last plan at the end of the
// view, all fresh.
func (s *Planner) sync() {
	if s.lastQuery >= s.synced {
		s.dropTurnReasoning() // a user message arrived
	}
	for ; s.synced < len(s.entries); s.synced++ {
		e := &s.entries[s.synced]
		m := s.render(s.synced)
		e.size = sizeOf(m)
		e.fresh = e.size
		s.dirty = append(s.dirty, s.synced)
		s.view.push(s.synced, m, e.fresh)
	}
}

// change re-renders entry i after its form, reasoning or notice changed,
// and puts it in its place in the view (or, when the view no longer holds
// it, counts the change as drift). contentNew says the content was
// replaced: its bytes are new to the engine; otherwise only bytes added
// (a notice) are new.
func (s *Planner) change(i int, contentNew bool) {
	e := &s.entries[i]
	m := s.render(i)
	size := sizeOf(m)
	oldSize, oldFresh := e.size, e.fresh
	fresh := freshAfter(oldSize, oldFresh, size, len(m.Content), contentNew)
	e.size, e.fresh = size, fresh
	if fresh > 0 {
		s.dirty = append(s.dirty, i)
	}
	if k := s.view.find(i); k >= 0 {
		s.view.replace(k, m, fresh)
	} else {
		s.drift.size += size - oldSize
		s.drift.fresh += fresh - oldFresh
	}
}

// freshAfter is how many bytes of a re-rendered message no request has
// carried: all of them if the old one was never sent; the new content if
// the content was replaced; otherwise the old fresh bytes plus any added.
func freshAfter(oldSize, oldFresh, size, content int, contentNew bool) int {
	switch {
	case oldFresh >= oldSize:
		return size
	case contentNew:
		return min(size, oldFresh+content)
	}
	return min(size, oldFresh+max(0, size-oldSize))
}

// estimate is the decision estimate, in tokens, of the next request.
func (s *Planner) estimate() int {
	return s.price(s.counted())
}

// price is the estimate of a view of size bytes, fresh of them new, with
// the fixed prefix in front.
func (s *Planner) price(size, fresh int) int {
	known := size - fresh
	if s.prefix.sent {
		known += s.cfg.PrefixChars
	} else {
		fresh += s.cfg.PrefixChars
	}
	return s.est.Known(known) + s.est.New(fresh)
}

// likely is the estimate with every byte at the learned ratio: what the
// engine will most likely count.
func (s *Planner) likely() int {
	return s.est.Known(s.countedSize() + s.cfg.PrefixChars)
}

// prefixTokens is the fixed prefix's share of the estimate.
func (s *Planner) prefixTokens() int {
	if s.prefix.sent {
		return s.est.Known(s.cfg.PrefixChars)
	}
	return s.est.New(s.cfg.PrefixChars)
}

// rebuild lays the view out anew after a fold: the recap, then every
// entry from fold.upTo on (the middle recap standing for the entries it
// folded). When the first kept message is the user's, the recap leads
// that message instead of standing alone, so that roles still alternate.
func (s *Planner) rebuild() {
	midFresh := s.view.freshAt(middleRecap)
	s.view.truncate(0)
	s.drift = drift{}
	if s.fold.lead >= 0 {
		s.entries[s.fold.lead].lead = ""
		s.fold.lead = -1
	}
	s.fold.split = false
	if front := s.fold.front; front.msg.Content != "" {
		first := s.fold.upTo
		switch {
		case first < s.synced && s.log[first].Role == User:
			s.leadWith(first, front)
		case s.splitFront(first):
			steady := Message{Role: User, Content: front.msg.Content[:front.steady]}
			s.view.push(frontRecap, steady, sizeOf(steady)-min(front.verbatim, front.steady))
			s.leadRest(first, front)
		default:
			s.view.push(frontRecap, front.msg, sizeOf(front.msg)-front.verbatim)
		}
	}
	if s.fold.midTo == 0 {
		for i := s.fold.upTo; i < s.synced; i++ {
			s.place(i)
		}
		return
	}
	for i := s.fold.upTo; i < s.fold.midFrom; i++ {
		s.place(i)
	}
	s.placeMid(midFresh)
}

// leadWith makes the front recap lead entry first, a user message: its
// bytes are new but for what the recap carries verbatim.
func (s *Planner) leadWith(first int, front CarriedRecap) {
	e := &s.entries[first]
	lead := front.msg.Content + "\n\n"
	oldSize, oldFresh := e.size, e.fresh
	e.lead = lead
	e.size = sizeOf(s.render(first))
	if oldFresh >= oldSize {
		e.fresh = e.size
	} else {
		e.fresh = min(e.size, oldFresh+len(lead)-front.verbatim)
	}
	s.fold.lead = first
	s.dirty = append(s.dirty, first)
}

// splitFront reports whether the front recap is laid out in two
// messages, with first the first kept entry: on an engine that restarts
// from checkpoints, when first is the assistant's and the recap has a
// steady part (the preamble and what the user said) and more. The
// steady part is then the user's message and the rest leads first, so
// that the request after the steady part goes on with an assistant
// message and the rest is the assistant's text: a checkpoint request of
// the steady part alone, or of the rest as the start of the assistant's
// turn (llama.cpp's prefill of a last assistant message), is the start
// of the request itself, and its checkpoint stands a few tokens before
// the place where the next fold changes the request — the rest's start
// when it rewrites the recap, the rest's end when it appends to it
// (frontCheckpoints). In one user message every such place is followed
// by the template's end of message, which a checkpoint request cannot
// share with the request: its checkpoint then stands a micro-batch
// earlier.
func (s *Planner) splitFront(first int) bool {
	front := s.fold.front
	return s.cache.model.Class == CacheCheckpointed && front.steady > 0 && front.steady < len(front.msg.Content) &&
		first < s.synced && s.log[first].Role == Assistant
}

// leadRest makes the front recap's rest, after its steady part, lead
// entry first, the assistant's message: its bytes are new but for what
// the recap carried before after its steady part.
func (s *Planner) leadRest(first int, front CarriedRecap) {
	e := &s.entries[first]
	lead := front.msg.Content[front.steady:] + "\n\n"
	oldSize, oldFresh := e.size, e.fresh
	s.fold.lead, s.fold.split = first, true
	e.lead = lead
	e.size = sizeOf(s.render(first))
	if oldFresh >= oldSize {
		e.fresh = e.size
	} else {
		e.fresh = min(e.size, oldFresh+len(lead)-max(front.verbatim-front.steady, 0))
	}
	s.dirty = append(s.dirty, first)
}

// placeMid appends the middle recap to the view, fresh of its bytes new,
// then every entry from fold.midTo on.
func (s *Planner) placeMid(fresh int) {
	s.fold.mid.msg.Rides = s.midRides()
	s.view.push(middleRecap, s.fold.mid.msg, fresh)
	for i := s.fold.midTo; i < s.synced; i++ {
		s.place(i)
	}
}

// rebuildFrom lays the view out anew from its item k on, with mid as the
// middle recap (verbatim of its bytes carried before), after a fold into
// it: what comes before k stays as it was sent.
func (s *Planner) rebuildFrom(k int, mid Message, verbatim int) {
	s.view.truncate(k)
	s.fold.mid.msg, s.fold.mid.verbatim = mid, verbatim
	s.placeMid(sizeOf(mid) - verbatim)
}

// place appends entry i to the view as it stands.
func (s *Planner) place(i int) {
	e := &s.entries[i]
	m := s.render(i)
	if size := sizeOf(m); size != e.size {
		e.fresh = freshAfter(e.size, e.fresh, size, len(m.Content), true)
		e.size = size
	}
	if e.fresh > 0 {
		s.dirty = append(s.dirty, i)
	}
	s.view.push(i, m, e.fresh)
}

// Messages returns every message appended so far, in order, whatever the
// view now holds of them. The caller must not modify them.
func (s *Planner) Messages() []Message { return s.log[:len(s.log):len(s.log)] }
