package contextwin

// msgOverhead is what a chat template adds around each message (role
// markers, separators), in bytes at the baseline: about four tokens.
const msgOverhead = 16

// Config sets up a Session.
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
	// TargetFraction is the shed target as a share of the shed point; 0
	// means 0.7. It is held within 0.3…0.95: above that an event sheds
	// almost nothing and fires again on the next round.
	TargetFraction float64
}

// Usage is what the engine reported for a request.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	FinishReason     string
}

// Session is the context state of one agent session: every message it has
// seen, how each stands in the request (whole, shed to its summary, cut to
// fit), the recap, and what has been learned about the engine's tokens.
// The agent appends messages, asks for a Plan before each request and
// reports the engine's figures with Observe.
//
// A Session is not safe for concurrent use.
type Planner struct {
	cfg Config
	est Estimator
	res Reserve

	log     []Message // the transcript, append-only
	entries []entry   // how each message stands, in step with log
	sent    int       // entries [0, sent) existed when the engine last answered

	// The view: what the next request carries after the fixed prefix. It
	// grows by appending until a shrink event rebuilds it.
	slots  []int     // entry index per message; recapSlot for the recap
	msgs   []Message // the messages, in step with slots
	synced int       // entries [0, synced) have been placed

	// Bytes of the view, and how many of them no request carried yet;
	// dirty lists the entries that hold some of those.
	size, fresh int
	dirty       []int
	prefixSent  bool
	// prefixReported is the engine's count of the fixed prefix (from the
	// warm-up), 0 when it gave none.
	prefixReported int

	foldedUpTo int    // entries before this are folded into the recap
	recap      *Recap // the current recap, nil before the first fold
	// recapMsg is the recap as a view message when it stands alone;
	// recapSize and recapFresh are its bytes and its new bytes.
	recapMsg              Message
	recapSize, recapFresh int
	leadEntry             int // the entry the recap leads, -1 when it stands alone
	// recapVerbatim is how many bytes of the recap were carried before
	// (the task and its payload, verbatim).
	recapVerbatim int
	// recapFront is how many bytes open the recap and stay the same when
	// the next fold rewrites it: the preamble and what the user said.
	recapFront int
	// recapText is the size of the recap's own text in its message (the
	// first recap's and what later folds appended), its verbatim parts
	// aside: what the recap budget bounds.
	recapText int
	// The middle recap: entries [midFrom, midTo) are folded into midMsg,
	// which stands in the view after the older turns [foldedUpTo,
	// midFrom), left as they were sent, and before the newest; midTo is
	// 0 when there is none. midSize and midFresh are its bytes and its
	// new bytes, midVerbatim how many of them were carried before, and
	// midText the size of its own text (what the recap budget bounds,
	// with recapText).
	midFrom, midTo                          int
	midMsg                                  Message
	midSize, midFresh, midVerbatim, midText int
	noteSaved                               []savedMsg // view messages the note round's request replaced
	mapSent                                 string     // the map update the recap carries
	note                                    string     // the model's note for the coming fold
	noteAsked                               bool
	compact                                 bool // a fold was asked for (Compact)

	lastUser    int // the newest user message, -1 none
	taskPayload int // elected task payload entry, -1 none
	taskTurn    int // the user entry that opened the turn it was elected in

	lastChars     int  // bytes of the last request planned
	carriedUpTo   int  // entries before this were in the last request planned
	lastReported  int  // prompt tokens the engine reported for it
	emergencyUsed bool // an emergency fold since the engine last answered
	collapsed     int  // no window: entries before this have collapsed
}

// recapSlot stands in the view for the recap message, midSlot for the
// middle recap.
const (
	recapSlot = -1
	midSlot   = -2
)

// slotKey orders view slots: the recap first, then the entries, the
// middle recap between midFrom's and midTo's.
func (s *Planner) slotKey(v int) int {
	switch v {
	case recapSlot:
		return -1
	case midSlot:
		return 2*s.midTo - 1
	}
	return 2 * v
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

// NewSession starts a session.
func NewPlanner(cfg Config) *Planner {
	if cfg.Window < 0 {
		cfg.Window = 0
	}
	if cfg.TargetFraction == 0 {
		cfg.TargetFraction = 0.7
	}
	cfg.TargetFraction = min(max(cfg.TargetFraction, 0.3), 0.95)
	return &Planner{cfg: cfg, res: Reserve{Pinned: cfg.Reserve}, taskPayload: -1, taskTurn: -1, leadEntry: -1, lastUser: -1}
}

// Append adds a message to the session. Tool results are appended after
// the assistant message that called them.
func (s *Planner) Append(m Message) {
	if m.Role == User {
		s.lastUser = len(s.log)
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
	s.prefixSent = false
	s.prefixReported = 0
}

// Estimator returns what has been learned about the engine's tokens.
func (s *Planner) Estimator() Estimator { return s.est }

// Observe takes the engine's figures for the request last planned: the
// prompt count teaches the token ratio, the completion the reserve. It
// reports truncated when the prompt count is far below what the request
// must have cost — an engine that silently dropped part of it — and then
// learns nothing from it.
func (s *Planner) Observe(u Usage) (truncated bool) {
	truncated = s.est.Learn(s.lastChars, u.PromptTokens)
	if !truncated && u.PromptTokens > 0 {
		s.lastReported = u.PromptTokens
	}
	s.res.Observe(u.CompletionTokens, u.FinishReason)
	// What the request carried is no longer new: everything, or for a
	// note round only what came before the current round.
	bound := s.carriedUpTo
	kept := s.dirty[:0]
	for _, i := range s.dirty {
		if i < bound {
			s.fresh -= s.entries[i].fresh
			s.entries[i].fresh = 0
		} else if s.entries[i].fresh > 0 {
			kept = append(kept, i)
		}
	}
	s.dirty = kept
	s.fresh -= s.recapFresh + s.midFresh
	s.recapFresh, s.midFresh = 0, 0
	s.prefixSent = true
	s.sent = max(s.sent, bound)
	s.emergencyUsed = false
	return truncated
}

// Chip is the status line's view of the last request: the engine's own
// count when it gave one, else the estimate.
func (s *Planner) Chip() Chip {
	size := s.lastReported
	if size == 0 {
		size = s.estimate()
	}
	return NewChip(size, s.Budget())
}

// Recap returns the current recap, nil before the first fold.
func (s *Planner) Recap() *Recap { return s.recap }

// --- the view ---

// render is entry i as the view carries it.
func (s *Planner) render(i int) Message {
	e := &s.entries[i]
	m := s.log[i]
	if e.form != whole {
		m.Content = e.text
	}
	if e.reasoningShed {
		m.Reasoning = ""
	}
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
	n := len(m.Content) + len(m.Reasoning) + msgOverhead
	for _, c := range m.ToolCalls {
		n += len(c.ID) + len(c.Name) + len(c.Arguments) + msgOverhead
	}
	return n
}

// sync places the entries appended since the last plan at the end of the
// view, all fresh.
func (s *Planner) sync() {
	s.restoreNote()
	for ; s.synced < len(s.entries); s.synced++ {
		e := &s.entries[s.synced]
		m := s.render(s.synced)
		e.size = sizeOf(m)
		e.fresh = e.size
		s.dirty = append(s.dirty, s.synced)
		s.slots = append(s.slots, s.synced)
		s.msgs = append(s.msgs, m)
		s.size += e.size
		s.fresh += e.fresh
	}
}

// change re-renders entry i after its form, reasoning or notice changed,
// and updates its slot at view index k. contentNew says the content was
// replaced: its bytes are new to the engine; otherwise only bytes added
// (a notice) are new.
func (s *Planner) change(i, k int, contentNew bool) {
	e := &s.entries[i]
	m := s.render(i)
	size := sizeOf(m)
	fresh := freshAfter(e.size, e.fresh, size, len(m.Content), contentNew)
	s.size += size - e.size
	s.fresh += fresh - e.fresh
	e.size, e.fresh = size, fresh
	if fresh > 0 {
		s.dirty = append(s.dirty, i)
	}
	if k >= 0 {
		s.msgs[k] = m
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
	return s.price(s.size, s.fresh)
}

// price is the estimate of a view of size bytes, fresh of them new, with
// the fixed prefix in front.
func (s *Planner) price(size, fresh int) int {
	known := size - fresh
	if s.prefixSent {
		known += s.cfg.PrefixChars
	} else {
		fresh += s.cfg.PrefixChars
	}
	return s.est.Known(known) + s.est.New(fresh)
}

// likely is the estimate with every byte at the learned ratio: what the
// engine will most likely count.
func (s *Planner) likely() int {
	return s.est.Known(s.size + s.cfg.PrefixChars)
}

// prefixTokens is the fixed prefix's share of the estimate.
func (s *Planner) prefixTokens() int {
	if s.prefixSent {
		return s.est.Known(s.cfg.PrefixChars)
	}
	return s.est.New(s.cfg.PrefixChars)
}

// view returns the messages of the view; the caller must not modify them.
func (s *Planner) view() []Message {
	return s.msgs[:len(s.msgs):len(s.msgs)]
}

// slotOf returns the view index of entry i (or of midSlot), or -1.
// Slots are in entry order (the recap first), so a binary search finds
// it.
func (s *Planner) slotOf(i int) int {
	lo, hi := 0, len(s.slots)
	key := s.slotKey(i)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s.slotKey(s.slots[mid]) < key {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(s.slots) && s.slots[lo] == i {
		return lo
	}
	return -1
}

// rebuild lays the view out anew after a fold: the recap, then every
// entry from foldedUpTo on (the middle recap standing for the entries it
// folded). When the first kept message is the user's, the
// recap leads that message instead of standing alone, so that roles still
// alternate.
func (s *Planner) rebuild() {
	s.slots, s.msgs = s.slots[:0], s.msgs[:0]
	s.size, s.fresh = 0, 0
	if s.leadEntry >= 0 {
		s.entries[s.leadEntry].lead = ""
		s.leadEntry = -1
	}
	if s.recapMsg.Content != "" {
		first := s.foldedUpTo
		if first < s.synced && s.log[first].Role == User {
			e := &s.entries[first]
			lead := s.recapMsg.Content + "\n\n"
			oldSize, oldFresh := e.size, e.fresh
			e.lead = lead
			e.size = sizeOf(s.render(first))
			if oldFresh >= oldSize {
				e.fresh = e.size
			} else {
				e.fresh = min(e.size, oldFresh+len(lead)-s.recapVerbatim)
			}
			s.leadEntry = first
			s.dirty = append(s.dirty, first)
		} else {
			s.recapSize = sizeOf(s.recapMsg)
			s.recapFresh = s.recapSize - s.recapVerbatim
			s.slots = append(s.slots, recapSlot)
			s.msgs = append(s.msgs, s.recapMsg)
			s.size += s.recapSize
			s.fresh += s.recapFresh
		}
	}
	if s.midTo == 0 {
		for i := s.foldedUpTo; i < s.synced; i++ {
			s.place(i)
		}
		return
	}
	for i := s.foldedUpTo; i < s.midFrom; i++ {
		s.place(i)
	}
	s.placeMid()
}

// placeMid appends the middle recap to the view, then every entry from
// midTo on.
func (s *Planner) placeMid() {
	s.slots = append(s.slots, midSlot)
	s.msgs = append(s.msgs, s.midMsg)
	s.size += s.midSize
	s.fresh += s.midFresh
	for i := s.midTo; i < s.synced; i++ {
		s.place(i)
	}
}

// rebuildFrom lays the view out anew from view slot k on, with mid as
// the middle recap (verbatim of its bytes carried before), after a fold
// into it: what comes before k stays as it was sent.
func (s *Planner) rebuildFrom(k int, mid Message, verbatim int) {
	for _, j := range s.slots[k:] {
		if j == midSlot {
			s.size -= s.midSize
			s.fresh -= s.midFresh
			continue
		}
		e := &s.entries[j]
		s.size -= e.size
		s.fresh -= e.fresh
	}
	s.slots, s.msgs = s.slots[:k], s.msgs[:k]
	s.midMsg, s.midVerbatim = mid, verbatim
	s.midSize = sizeOf(mid)
	s.midFresh = s.midSize - verbatim
	s.placeMid()
}

// place appends entry i to the view as it stands.
func (s *Planner) place(i int) {
	e := &s.entries[i]
	m := s.render(i)
	size := sizeOf(m)
	if size != e.size {
		e.fresh = freshAfter(e.size, e.fresh, size, len(m.Content), true)
		e.size = size
	}
	if e.fresh > 0 {
		s.dirty = append(s.dirty, i)
	}
	s.slots = append(s.slots, i)
	s.msgs = append(s.msgs, m)
	s.size += e.size
	s.fresh += e.fresh
}

// Messages returns every message appended so far, in order, whatever the
// view now holds of them. The caller must not modify them.
func (s *Planner) Messages() []Message { return s.log[:len(s.log):len(s.log)] }
