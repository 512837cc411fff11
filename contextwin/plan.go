package contextwin

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Event says what a plan did to the previous request.
type Event int

const (
	// Append: the request is the previous one plus the new messages, byte
	// for byte (a new result may have been cut to fit).
	Append Event = iota
	// Note: before a fold, one round with tools forbidden asks the model
	// what it has established. Send Plan.Messages with tool_choice "none",
	// hand the answer to SetNote, then Plan again.
	Note
	// Shed: old results were shed to their summaries.
	Shed
	// Fold: old turns were folded into the recap (after shedding).
	Fold
	// Emergency: the engine refused the last request as too long; turns
	// were folded without a note, and the request is to be retried once.
	Emergency
)

var eventNames = [...]string{Append: "append", Note: "note", Shed: "shed", Fold: "fold", Emergency: "emergency fold"}

func (e Event) String() string { return eventNames[e] }

// Plan is what the next request carries and what happened to get there.
type Plan struct {
	Event Event
	// Messages follow the fixed prefix. They are a copy the caller owns:
	// changing them changes nothing in the planner.
	Messages []Message
	// MaxTokens for the request; 0 leaves it to the engine.
	MaxTokens int
	// Estimate is the request's size in tokens as decisions count it.
	Estimate int
	Chip     Chip

	// Shed lists what this event shed, ShedChars how many bytes that
	// removed, Short how many tokens above the shed target shedding alone
	// left the request (a fold then closed the gap).
	Shed      []Removed
	ShedChars int
	Short     int
	// Folded is how many messages this event folded; RecapChars the size
	// of the recap that replaced them.
	Folded     int
	RecapChars int
	// Cut lists the new results cut to fit.
	Cut []Cut
	// Checkpoints are requests to send first, in order, each with
	// max_tokens 1 (their messages follow the fixed prefix), on an engine
	// that restarts from checkpoints: each ends where the engine's
	// checkpoint lands just before a place where the next fold will change
	// the request — the end of the front recap's steady part, where a
	// rewrite changes it, and the recap's end, where an appended part
	// goes — so that fold restarts there, and not at an older checkpoint;
	// before an append, the request itself then the primer, so that the
	// checkpoint a full slot keeps stands at its end (chainPlant); before
	// a note round that carries the request whole, the request itself,
	// which the round after the note sends again (noteCheckpoint).
	// Their figures go to ObserveCheckpoint.
	Checkpoints [][]Message
	// Fresh asks for the first of the Checkpoints to be sent without the
	// engine's prompt cache (llama.cpp's cache_prompt false): it starts
	// the slot over, so that its checkpoint, the first of the slot, is
	// one a full slot keeps (see option.reset).
	Fresh bool

	// TooSmall is set when the window cannot hold the fixed prefix and one
	// round: Problem says so in a sentence for the user. It is a state to
	// report, not one to retry.
	TooSmall bool
	// GiveUp is set by an Overflow that follows another without an answer
	// in between: the one retry was spent.
	GiveUp  bool
	Problem string
}

// Removed is one result shed to its summary, or reasoning dropped.
type Removed struct {
	Index int    // the message's index in the session
	What  string // "read a.go", "reasoning", …
	Chars int    // bytes removed
}

// Cut is one new result cut to fit the room left.
type Cut struct {
	Index      int
	From, To   int  // bytes before and after
	Spill      bool // its kind is worth a spill file the model can page through
	SpillPath  string
	OverWindow bool // it would not have fitted even in an empty window
}

// minCut is the least a cut result keeps, in bytes, head and tail
// together.
const minCut = 400

// Plan decides the next request. Call it after appending the newest
// messages (a user message, or a round's tool results) and before sending.
func (s *Planner) Plan() Plan {
	s.sync()
	if s.cfg.Window <= 0 {
		return s.planNoWindow()
	}
	b := s.Budget()
	s.fitInstruction(b)
	if p, ok := s.tooSmall(b); !ok {
		return p
	}
	// Two estimates: the cautious one prices bytes no request has carried
	// at 1.6 bytes a token, and keeps every request inside the window; the
	// likely one prices them at the learned ratio, and decides when the
	// history is due — so that one dense new result, priced as if it were
	// the densest text there is, does not pull the next event forward.
	if s.note.compact {
		return s.shrink(b, false)
	}
	e, likely := s.estimate(), s.likely()
	if likely <= b.ShedPoint && e <= b.Usable {
		// A note asked for may have taught the estimator that the request
		// is smaller than it looked: no fold after all. A later fold asks
		// afresh.
		s.note.text, s.note.asked, s.note.held = "", false, false
		return s.finish(Plan{Event: Append})
	}

	// Over. When the new results are what pushed it over — the rest still
	// sits under the shed target — they are cut to the room left: a single
	// large result is cut, not paid for with the history. Otherwise the
	// history is due: shrink.
	fresh := s.freshResults()
	need, needLikely := 0, 0
	for _, i := range fresh {
		need += s.est.New(s.entries[i].size)
		needLikely += s.est.Known(s.entries[i].size)
	}
	rest := likely - needLikely
	limit := b.ShedPoint
	if likely <= b.ShedPoint {
		// The history is not due: only the cautious price of the new
		// results, bytes the engine has not seen, keeps the request over
		// the window. They are cut to it; no event for their sake.
		limit = b.Usable
	}
	// After a note round that carried them whole, the engine holds them as
	// they are: cut now, the request would change inside them and the
	// fold the note was asked for would come at the next round all the
	// same (shrink holds it while the request fits).
	noted := s.note.asked && s.note.whole && s.note.text != ""
	if need > 0 && !noted && (likely <= b.ShedPoint || rest <= b.ShedTarget && b.ShedPoint-rest >= min(needLikely, b.Usable/8)) {
		p := Plan{Event: Append}
		p.Cut = s.fit(fresh, limit)
		s.note.text, s.note.asked, s.note.held = "", false, false // a later fold asks afresh: this note would be stale
		return s.finish(p)
	}
	return s.shrink(b, false)
}

// Compact asks for a fold now, whatever the size: the next Plan returns
// the note round (when there is something to fold), and the one after it
// the fold. It reports why it cannot: no known window, or nothing older
// than the current round to fold.
func (s *Planner) Compact() error {
	s.sync()
	switch {
	case s.cfg.Window <= 0:
		return errors.New("no known window: there is nothing to fold against; set REIKA_CONTEXT_WINDOW")
	case !s.foldable():
		return errors.New("nothing to fold: the conversation is no longer than the turns a fold keeps")
	}
	if n := s.foldableTokens(); n < minCompact {
		return fmt.Errorf("nothing worth folding: the turns a fold would replace hold about %d tokens, less than a recap and the note take (%d)", n, minCompact)
	}
	s.note.compact = true
	return nil
}

// minCompact is the least a compaction must fold, in tokens: the note
// round and the recap's scaffolding cost about this much, so folding less
// would grow the request.
const minCompact = 1024

// foldableTokens estimates what a fold of everything before the current
// round would replace.
func (s *Planner) foldableTokens() int {
	n := 0
	for i := s.fold.upTo + 1; i < s.currentStart() && i < len(s.entries); i++ {
		n += s.entryTokens(i)
	}
	return n
}

// EditRecap replaces the current recap's text with the user's edit; the
// next request carries it (and so is not an append). What the fold
// carries beside the recap's text — the task, verbatim — stays as it was,
// and the next fold builds on the edited text (Recap.Earlier). It reports
// false when there is no recap yet.
func (s *Planner) EditRecap(text string) bool {
	if s.fold.recap == nil {
		return false
	}
	edited := EditedRecap(text)
	// The edit replaces the recap's text — the first fold's and whatever
	// later folds appended — and what the recap carries word for word
	// stays: the user's messages, the task's payload, the map's news.
	v, _ := s.verbatimText(0, s.fold.upTo)
	var b strings.Builder
	s.fold.front.steady = writeFront(&b, v)
	content := b.String() + edited.Text
	if s.fold.mapSent != "" {
		content += "\n\n" + mapHeading + s.fold.mapSent
	}
	s.fold.recap = &edited
	s.fold.front.text = len(edited.Text)
	s.fold.front.msg.Content = content
	s.fold.front.verbatim = 0
	s.rebuild()
	return true
}

// AbandonNote forgets a note round that was asked for and never
// answered (the user cancelled): no fold follows from it, and a
// compaction asked for is dropped.
func (s *Planner) AbandonNote() {
	s.note.text, s.note.asked, s.note.compact, s.note.held = "", false, false, false
}

// SetNote hands over the model's note for the coming fold; "" when the
// note round failed or came back empty (the fold goes ahead without one).
func (s *Planner) SetNote(note string) {
	s.note.text = strings.TrimSpace(note)
	if s.note.text != "" {
		s.note.tokens = s.est.Known(len(s.note.text))
	}
}

// NoteInstruction is the question of the note round.
const NoteInstruction = "Older turns are being folded into a recap. Note what you will still need " +
	"(findings, decisions, plan, progress), exact facts one per line as `key: value`. No tools."

// Overflow handles the engine's refusal of the last request as too long:
// promptTokens and window are its own figures when it gave them (llama.cpp
// does, vLLM's text does). It learns from them, then folds without a model
// call and says in a gap notice what was removed. Retry the request once
// with the returned plan; a second Overflow before an answer gives up.
func (s *Planner) Overflow(promptTokens, window int) Plan {
	if s.last.emergency {
		return Plan{GiveUp: true, Messages: s.view.Messages(), Problem: fmt.Sprintf(
			"the engine refused the request as too long again after an emergency fold (%d tokens, window %d)", promptTokens, window)}
	}
	s.last.emergency = true
	s.refused()
	if window >= 256 && (s.cfg.Window == 0 || window < s.cfg.Window) {
		s.cfg.Window = window
	}
	s.est.Refused(s.last.chars, promptTokens)
	s.sync()
	if s.cfg.Window <= 0 {
		return Plan{GiveUp: true, Messages: s.view.Messages(), Problem: "the engine refused the request as too long and did not say its window: set REIKA_CONTEXT_WINDOW"}
	}
	b := s.Budget()
	if p, ok := s.tooSmall(b); !ok {
		return p
	}
	return s.shrink(b, true)
}

// tooSmall reports, with ok false, a window that cannot hold the fixed
// prefix and the user's instruction: the one state no shed, fold or cut
// can mend. Everything else is sent, degraded as far as it must be.
func (s *Planner) tooSmall(b Budget) (Plan, bool) {
	instruction := 0
	if t := s.turnStart(); t >= 0 {
		instruction = s.est.knownFirm(s.entries[t].size)
	}
	prefix := s.prefixCount()
	if need := prefix + instruction; need > b.Usable {
		fix := "use a larger window (REIKA_CONTEXT_WINDOW and the engine's context size)"
		if !s.cfg.Minimal {
			fix += ", or minimal mode (REIKA_MINIMAL=1), which leaves the repo map and AGENTS.md out"
		}
		p := Plan{TooSmall: true, Messages: s.view.Messages(), Problem: fmt.Sprintf(
			"window too small: the fixed prefix (%d tokens) and the instruction (%d tokens) need more than the %d tokens "+
				"a %d-token window leaves for the prompt; %s", prefix, instruction, b.Usable, b.Window, fix)}
		return s.finish(p), false
	}
	return Plan{}, true
}

// ObservePrefix takes the engine's count for a request of the fixed prefix
// and extra bytes of messages (the warm-up): from the first request on,
// the prefix is priced as bytes the engine has seen, at its own ratio
// (never sparser than 4 bytes a token). Its cache figures teach the
// planner's mirror of the engine's cache, as Observe's do. It says what
// the estimator made of the count, as Observe does; only a learned count
// stands for the prefix's size.
func (s *Planner) ObservePrefix(extra int, u Usage) Figure {
	return s.observePrefix(extra, 0, u)
}

// ObservePrimer is ObservePrefix for a warm-up whose message was the
// primer (Primer) of tokens tokens, extra bytes of the template around it
// not counted in them.
func (s *Planner) ObservePrimer(extra, tokens int, u Usage) Figure {
	return s.observePrefix(extra, tokens, u)
}

// observePrefix takes the count of a request of the fixed prefix, extra
// bytes and a message of tokens tokens.
func (s *Planner) observePrefix(extra, tokens int, u Usage) Figure {
	counted := u.PromptTokens - tokens
	if u.PromptTokens <= 0 || counted <= 0 {
		counted = 0
	}
	fig := s.est.Learn(s.cfg.PrefixChars+extra, counted)
	if u.PromptTokens > 0 {
		s.prefix.sent = true // the engine holds it now: no longer new bytes
		s.observeWarm(u)
	}
	if fig == Learned {
		s.prefix.reported = max(counted-ceilTokens(float64(extra)/charsPerToken), 1)
	}
	return fig
}

// prefixCount is the fixed prefix in tokens as the engine counts it, as
// far as its figures firmly say: whether a request can be sent at all is
// decided on it, so one count that may be misreported never decides
// alone. It is the warm-up's count while it agrees with the prefix at the
// firm ratio (the baseline until two counts agree), else that estimate;
// how much to shed, never below 4 bytes a token, is decided on the
// estimate.
func (s *Planner) prefixCount() int {
	firm := s.est.knownFirm(s.cfg.PrefixChars)
	if r := s.prefix.reported; r > 0 && r <= int(float64(firm)*outlierBand) {
		return r
	}
	return firm
}

// firmCount is the request's likely count as its firm figures say: what
// decides that it cannot be sent.
func (s *Planner) firmCount() int {
	return s.est.knownFirm(s.countedSize()) + s.prefixCount()
}

// finish fills in what every plan carries.
func (s *Planner) finish(p Plan) Plan {
	if p.Messages == nil {
		p.Messages = s.view.Messages()
	}
	if (p.Event == Fold || p.Event == Emergency && p.Folded > 0) && s.cfg.PrefixAtFold != nil {
		if n, ok := s.cfg.PrefixAtFold(); ok {
			s.prefixChanged(n)
		}
	}
	p.Estimate = s.estimate()
	if s.WantsPrimer() && p.Event != Note && len(p.Messages) > 0 {
		p.Checkpoints = append(p.Checkpoints, []Message{s.primer()})
	}
	if p.Event == Append {
		if plant := s.chainPlant(p.Messages); plant != nil {
			p.Checkpoints = append(p.Checkpoints, plant)
		}
	}
	if (p.Event == Fold || p.Event == Emergency && p.Folded > 0) && s.cache.model.Class == CacheCheckpointed {
		if s.fold.reset {
			s.fold.reset = false
			if plant := s.resetPlant(p.Messages); plant != nil {
				p.Checkpoints, p.Fresh = append(p.Checkpoints, plant), true
			}
		} else if cps, ok := s.frontCheckpoints(p.Messages); ok {
			p.Checkpoints = append(p.Checkpoints, cps...)
		} else {
			if s.fold.rewrote {
				if m := s.steadyCut(p.Messages); m != nil {
					p.Checkpoints = append(p.Checkpoints, m)
				}
			}
			if cut := s.checkpointCut(p.Messages); cut > 0 {
				p.Checkpoints = append(p.Checkpoints, slices.Clone(p.Messages[:cut]))
			}
		}
		s.cache.watch = true
	}
	if p.Fresh {
		s.plannedFresh(p.Messages, p.Checkpoints)
	} else {
		s.plannedWith(p.Messages, p.Checkpoints)
	}
	if p.Event != Note {
		s.last.chars = s.cfg.PrefixChars + s.countedSize()
		s.last.carriedUpTo = len(s.entries)
	}
	b := s.Budget()
	limit := positiveMin(s.cfg.MaxTokens, s.cfg.OutputLimit)
	if b.Window > 0 {
		p.MaxTokens = b.MaxTokens(s.replyBase(p.Estimate, s.cfg.PrefixChars+s.countedSize()), limit)
	} else {
		p.MaxTokens = s.cfg.MaxTokens
	}
	p.Chip = NewChip(p.Estimate, b)
	return p
}

func positiveMin(a, b int) int {
	switch {
	case a <= 0:
		return max(b, 0)
	case b <= 0:
		return a
	}
	return min(a, b)
}

// currentStart is the first entry of the current round: the newest
// assistant message and the results after it, or the newest user message
// when no assistant spoke after it — and never after an entry the engine
// has not seen yet.
func (s *Planner) currentStart() int {
	i := len(s.entries) - 1
	for i > 0 && s.log[i].Role == Tool {
		i--
	}
	return max(min(i, s.sent), s.fold.upTo, s.fold.midTo, 0)
}

// turnStart is the user message that opened the current turn, or -1.
func (s *Planner) turnStart() int { return s.lastUser }

// freshResults are the current round's tool results no request has
// carried, in order: the ones an append may still cut.
func (s *Planner) freshResults() []int {
	var out []int
	for i := s.currentStart(); i < len(s.entries); i++ {
		e := &s.entries[i]
		if s.log[i].Role == Tool && e.fresh == e.size && i >= s.sent {
			out = append(out, i)
		}
	}
	return out
}

// roundResults are all the current round's tool results, sent or not: a
// shrink event rewrites the request anyway, so it may cut any of them
// (a note round has carried them once already).
func (s *Planner) roundResults() []int {
	var out []int
	for i := s.currentStart(); i < len(s.entries); i++ {
		if s.log[i].Role == Tool && i != s.task.payload {
			out = append(out, i)
		}
	}
	return out
}

// noteReply is the room, in tokens, a note needs to be written: a note
// round is skipped when the request with its question leaves less.
const noteReply = 512

// noticeRoom is the room, in bytes, held for the notice an event attaches
// to the newest message; the notice is clipped to it.
const noticeRoom = 640

// shrink is one shrink event. It prices the ways to shrink the request
// (price.go) and takes the cheapest per token of room it makes: usually a
// shed late in the request, which leaves everything before it cached; a
// fold when no shed makes room enough, after the model's note. When even
// the option with the most room leaves the request over the window, it
// degrades: the current round's results are cut further, then the task's
// payload to its head and tail. It stops only when the fixed prefix and
// the user's instruction alone do not fit.
func (s *Planner) shrink(b Budget, emergency bool) Plan {
	s.electTaskPayload()
	cands := s.shedCandidates()
	at := candidateAt(cands)
	o := s.pick(b, at, emergency)

	// A fold is preceded by the model's note — unless the request is
	// already too large to carry the question.
	if o.fold > 0 && !emergency && !s.note.asked && s.foldable() {
		msgs, est := s.noteMessages(b)
		if est+s.noteRoom() <= b.Window {
			s.note.asked = true
			p := s.finish(Plan{Event: Note, Messages: msgs, Checkpoints: s.noteCheckpoint()})
			p.Estimate = est
			p.MaxTokens = b.MaxTokens(s.replyBase(est, s.last.chars), positiveMin(s.cfg.MaxTokens, s.cfg.OutputLimit))
			return p
		}
	}

	// The note round carried this round's new results, and the request
	// it extended is still cached: sent now, as it stands, it costs
	// nothing again, where a fold now would prefill those results a
	// second time after its change. So while it fits, it goes as an
	// append, and the next round folds them in with the note in hand.
	if n, ok := s.holdFold(b, o, emergency); ok {
		// Its size is the engine's count of the note round, the question
		// in it: the reply has the room that count leaves, not what the
		// estimate of the new results would.
		p := s.finish(Plan{Event: Append})
		p.Estimate, p.Chip = n, NewChip(n, b)
		p.MaxTokens = b.MaxTokens(n, positiveMin(s.cfg.MaxTokens, s.cfg.OutputLimit))
		return p
	}
	p := Plan{Event: Shed}
	if o.fold > 0 {
		p.Event = Fold
	}
	if emergency {
		p.Event = Emergency
	}
	s.note.compact, s.note.held = false, false
	switch {
	case o.mid > 0 && o.rewrite:
		p.Folded, p.RecapChars = s.rewriteMiddle(b, o.mid, o.fold)
	case o.mid > 0:
		p.Folded, p.RecapChars = s.foldMiddle(b, o.mid, o.fold)
		s.fold.reset = o.reset
	case o.fold > 0:
		p.Folded, p.RecapChars = s.foldAt(b, o.fold)
	}
	s.dropTurnReasoning() // before a middle recap, a user message
	s.shedReasoningAfterChange()
	s.applySheds(&p, o, cands)
	if over := s.likely() - b.ShedTarget; over > 0 {
		p.Short = over
	}
	s.note.text, s.note.asked, s.note.held = "", false, false
	s.attachNotice(p, emergency, o.mid > 0)
	s.degrade(b, &p)
	return s.finish(p)
}

// applySheds sheds the option's candidates into p: those from its shed
// point on, none before what the event folded.
func (s *Planner) applySheds(p *Plan, o option, cands []shedCandidate) {
	from, least := o.shedFrom, s.fold.upTo
	if o.shedKept {
		from = 0
		if o.mid > 0 {
			least = o.fold // the older turns stay as they were sent
		}
	}
	for _, c := range cands {
		if k := s.view.find(c.index); k < 0 || k < from || c.index < least {
			continue
		}
		if c.what == shedPayload {
			if _, keep := s.summarize(c.index); keep {
				continue
			}
		}
		r := s.applyShed(c)
		if r.Chars > 0 || c.what != shedPayload {
			p.Shed = append(p.Shed, r)
			p.ShedChars += r.Chars
		}
	}
}

// pick is the shrink event's option: the one with the most room for a
// compaction asked for or an emergency, else the cheapest (choose).
func (s *Planner) pick(b Budget, at map[int][]shedCandidate, emergency bool) option {
	switch {
	case s.note.compact:
		return s.deepest(b, at, true)
	case emergency:
		return s.deepest(b, at, false)
	}
	opts := append(append(s.shedOptions(b, at), s.foldOptions(b, at)...), s.midOptions(b, at)...)
	if s.note.held {
		// The note was written for this fold: a shed instead would
		// waste it, and the next fold would ask again. (With no fold
		// left to take, the sheds stand.)
		if folds := slices.DeleteFunc(slices.Clone(opts), func(o option) bool { return o.fold == 0 }); len(folds) > 0 {
			opts = folds
		}
	}
	o, _ := s.choose(b, opts)
	return o
}

// deepest is the option with the most room: a fold of everything before
// the current round (its kept part shed when shed is set), or, with
// nothing to fold, a shed of everything sheddable.
func (s *Planner) deepest(b Budget, at map[int][]shedCandidate, keepWhole bool) option {
	best, found := option{}, false
	for _, o := range s.foldOptions(b, at) {
		if keepWhole && o.shedKept {
			continue
		}
		if !found || o.room > best.room {
			best, found = o, true
		}
	}
	if !keepWhole {
		for _, o := range s.shedOptions(b, at) {
			if !found || o.room > best.room {
				best, found = o, true
			}
		}
	}
	if !found {
		best.shedFrom = s.view.Len()
	}
	return best
}

// degrade brings a request the chosen event left over the window under
// it: the current round's results are cut further, then the task's
// payload to its head and tail. When the fixed prefix and the user's
// instruction alone do not fit, the plan says so.
func (s *Planner) degrade(b Budget, p *Plan) {
	// The next event must stay at least minGapFloor of growth away: when
	// even the option with the most room leaves less, the current round's
	// new results are cut (head and tail kept) to make it.
	floorGap := int(float64(b.Usable) * minGapFloor)
	if over := s.likely() - (b.ShedPoint - floorGap); over > 0 && len(s.roundResults()) > 0 {
		p.Cut = append(p.Cut, s.fit(s.roundResults(), s.estimate()-over)...)
	}
	if s.likely() <= b.ShedPoint && s.estimate() <= b.Usable {
		return
	}
	p.Cut = append(p.Cut, s.fit(s.roundResults(), b.ShedPoint)...)
	if s.estimate() > b.Usable && s.task.payload >= 0 {
		p.Cut = append(p.Cut, s.fit([]int{s.task.payload}, b.Usable)...)
	}
	// The cautious estimate prices bytes the engine has not seen at 1.6 a
	// token; whether to send at all is decided on the likely count, and
	// an engine that counts more refuses, which an emergency fold mends.
	if s.estimate() <= b.Usable || s.firmCount() <= b.Usable {
		return
	}
	p.TooSmall = true
	mode := "; use a larger window or minimal mode"
	if s.cfg.Minimal {
		mode = "; use a larger window"
	}
	p.Problem = fmt.Sprintf("window too small: after shedding, folding and cutting, the request still needs %d tokens, above the %d usable in a %d-token window%s",
		s.firmCount(), b.Usable, b.Window, mode)
}

// describe names a tool result for notices: its tool and what it was about.
func describe(log []Message, i int) string {
	m := log[i]
	name := ""
	for j := i - 1; j >= 0 && j >= i-64; j-- {
		for _, c := range log[j].ToolCalls {
			if c.ID == m.ToolCallID {
				name = c.Name
			}
		}
		if name != "" || log[j].Role != Tool {
			break
		}
	}
	if name == "" {
		name = m.Payload.Kind.String()
	}
	if m.Payload.Path != "" {
		return name + " " + headUpTo(m.Payload.Path, 120)
	}
	return name
}

// attachNotice tells the model, at the end of the newest message, what
// this event removed and how to get it back.
func (s *Planner) attachNotice(p Plan, emergency, mid bool) {
	var b strings.Builder
	if emergency {
		b.WriteString("\n\n[Context: the engine refused the last request as longer than its window, so ")
		if p.Folded > 0 {
			fmt.Fprintf(&b, "%d earlier messages were folded into the recap at the start of the conversation", p.Folded)
			if len(p.Shed) > 0 {
				b.WriteString(" and ")
			}
		}
		if len(p.Shed) > 0 {
			fmt.Fprintf(&b, "%d earlier results were shed to their summaries (%s)", len(p.Shed), listShed(p.Shed))
		}
		if p.Folded == 0 && len(p.Shed) == 0 {
			b.WriteString("the newest results were cut")
		}
		b.WriteString(". Nothing is lost: read files and run searches again for anything you need in full.]")
	} else {
		var payloads []Removed
		for _, sh := range p.Shed {
			if sh.What != "reasoning" && sh.What != "a partial reply" {
				payloads = append(payloads, sh)
			}
		}
		if len(payloads) > 0 {
			fmt.Fprintf(&b, "\n\n[Context: to stay within the window, %d earlier tool results were shed to their summaries: %s. "+
				"Run them again if you need their full text.]", len(payloads), listShed(payloads))
		}
		switch {
		case p.Folded > 0 && mid:
			fmt.Fprintf(&b, "\n\n[Context: %d earlier messages were folded into the recap before the newest turns.]", p.Folded)
		case p.Folded > 0:
			fmt.Fprintf(&b, "\n\n[Context: %d earlier messages were folded into the recap at the start of the conversation.]", p.Folded)
		}
	}
	if b.Len() == 0 || len(s.entries) == 0 {
		return
	}
	notice := b.String()
	if len(notice) > noticeRoom {
		notice = headUpTo(notice, noticeRoom-2) + "…]"
	}
	last := len(s.entries) - 1
	s.entries[last].notice += notice
	s.change(last, false)
}

func listShed(sh []Removed) string {
	const most = 8
	var names []string
	for i, x := range sh {
		if i == most {
			names = append(names, fmt.Sprintf("and %d more", len(sh)-most))
			break
		}
		names = append(names, x.What)
	}
	return strings.Join(names, ", ")
}

// planNoWindow is the plan with no known window: nothing is shed, cut or
// folded, but results older than the current round collapse to their
// summaries and only the newest rounds keep their reasoning.
func (s *Planner) planNoWindow() Plan {
	cur := s.currentStart()
	for i := s.collapsed; i < cur; i++ {
		e := &s.entries[i]
		if s.log[i].Role != Tool || e.form == summarized {
			continue
		}
		if sum, keep := s.summarize(i); !keep {
			e.form, e.text = summarized, sum
			s.change(i, true)
		}
	}
	s.collapsed = max(s.collapsed, cur)
	keep := s.cfg.ReasoningRounds
	for i := len(s.entries) - 1; i >= s.fold.upTo; i-- {
		e := &s.entries[i]
		if s.log[i].Role != Assistant || s.log[i].Reasoning == "" {
			continue
		}
		if keep > 0 {
			keep--
			continue
		}
		if e.reasoningShed {
			break // older ones were dropped already
		}
		e.reasoningShed = true
		s.change(i, false)
	}
	return s.finish(Plan{Event: Append})
}
