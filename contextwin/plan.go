package contextwin

import (
	"errors"
	"fmt"
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
	// Messages follow the fixed prefix. They are shared with the session:
	// do not modify them.
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
func (s *Session) Plan() Plan {
	s.sync()
	if s.cfg.Window <= 0 {
		return s.planNoWindow()
	}
	b := s.Budget()
	if p, ok := s.tooSmall(b); !ok {
		return p
	}
	// Two estimates: the cautious one prices bytes no request has carried
	// at 1.6 bytes a token, and keeps every request inside the window; the
	// likely one prices them at the learned ratio, and decides when the
	// history is due — so that one dense new result, priced as if it were
	// the densest text there is, does not pull the next event forward.
	if s.compact {
		return s.shrink(b, false)
	}
	e, likely := s.estimate(), s.likely()
	if likely <= b.ShedPoint && e <= b.Usable {
		// A note asked for may have taught the estimator that the request
		// is smaller than it looked: no fold after all. A later fold asks
		// afresh.
		s.note, s.noteAsked = "", false
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
	if need > 0 && rest <= b.ShedTarget && b.ShedPoint-rest >= min(needLikely, b.Usable/8) {
		p := Plan{Event: Append}
		p.Cut = s.fit(fresh, b.ShedPoint)
		return s.finish(p)
	}
	return s.shrink(b, false)
}

// Compact asks for a fold now, whatever the size: the next Plan returns
// the note round (when there is something to fold), and the one after it
// the fold. It reports why it cannot: no known window, or nothing older
// than the current round to fold.
func (s *Session) Compact() error {
	s.sync()
	switch {
	case s.cfg.Window <= 0:
		return errors.New("no known window: there is nothing to fold against; set REIKA_CONTEXT_WINDOW")
	case !s.foldable() || s.foldBoundary(s.Budget(), s.Budget().ShedTarget-s.est.New(noticeRoom)) <= s.foldedUpTo:
		return errors.New("nothing to fold: the conversation is no longer than the turns a fold keeps")
	}
	s.compact = true
	return nil
}

// EditRecap replaces the current recap's text with the user's edit; the
// next request carries it (and so is not an append). What the fold
// carries beside the recap's text — the task, verbatim — stays as it was,
// and the next fold builds on the edited text (Recap.Earlier). It reports
// false when there is no recap yet.
func (s *Session) EditRecap(text string) bool {
	if s.recap == nil {
		return false
	}
	edited := EditedRecap(text)
	content, old := s.recapMsg.Content, s.recap.Text
	switch i := strings.Index(content, old); {
	case old != "" && i >= 0:
		content = content[:i] + edited.Text + content[i+len(old):]
	case strings.HasPrefix(content, foldPreamble):
		content = foldPreamble + edited.Text + content[len(foldPreamble):]
	default:
		content = foldPreamble + edited.Text
	}
	s.recap = &edited
	s.recapMsg.Content = content
	s.recapVerbatim = 0
	s.rebuild()
	return true
}

// AbandonNote forgets a note round that was asked for and never
// answered (the user cancelled): no fold follows from it, and a
// compaction asked for is dropped.
func (s *Session) AbandonNote() {
	s.note, s.noteAsked, s.compact = "", false, false
}

// SetNote hands over the model's note for the coming fold; "" when the
// note round failed or came back empty (the fold goes ahead without one).
func (s *Session) SetNote(note string) {
	s.note = strings.TrimSpace(note)
}

// NoteInstruction is the question of the note round.
const NoteInstruction = "The conversation is about to be compacted: older turns will be replaced by a recap. " +
	"Before that, write a short note of what you have established that you will still need: " +
	"findings, decisions, the plan and where you are in it. Put exact facts one per line as `key: value` " +
	"(paths, commands, names, constraints) so they are carried over word for word. Do not call tools."

// Overflow handles the engine's refusal of the last request as too long:
// promptTokens and window are its own figures when it gave them (llama.cpp
// does, vLLM's text does). It learns from them, then folds without a model
// call and says in a gap notice what was removed. Retry the request once
// with the returned plan; a second Overflow before an answer gives up.
func (s *Session) Overflow(promptTokens, window int) Plan {
	if s.emergencyUsed {
		return Plan{GiveUp: true, Messages: s.view(), Problem: fmt.Sprintf(
			"the engine refused the request as too long again after an emergency fold (%d tokens, window %d)", promptTokens, window)}
	}
	s.emergencyUsed = true
	if window >= 256 && (s.cfg.Window == 0 || window < s.cfg.Window) {
		s.cfg.Window = window
	}
	if promptTokens > 0 && s.lastChars > 0 {
		s.est.Ratio = float64(promptTokens) / (float64(s.lastChars) / charsPerToken)
	}
	s.sync()
	if s.cfg.Window <= 0 {
		return Plan{GiveUp: true, Messages: s.view(), Problem: "the engine refused the request as too long and did not say its window: set REIKA_CONTEXT_WINDOW"}
	}
	b := s.Budget()
	if p, ok := s.tooSmall(b); !ok {
		return p
	}
	return s.shrink(b, true)
}

// tooSmall reports, with ok false, a window that cannot hold the fixed
// prefix and the smallest round under the shed target.
func (s *Session) tooSmall(b Budget) (Plan, bool) {
	cur := s.currentStart()
	round := 0
	for i := cur; i < len(s.entries); i++ {
		m := s.log[i]
		if m.Role == Tool {
			round += s.est.New(min(sizeOf(m), minCut+msgOverhead))
		} else {
			round += s.est.New(sizeOf(m))
		}
	}
	if need := s.prefixTokens() + round; need > b.ShedTarget {
		p := Plan{TooSmall: true, Messages: s.view(), Problem: fmt.Sprintf(
			"window too small: the fixed prefix (%d tokens) and one round (%d tokens) need more than the %d tokens a %d-token window "+
				"leaves before its shed target; use a larger window or minimal mode", s.prefixTokens(), round, b.ShedTarget, b.Window)}
		return s.finish(p), false
	}
	return Plan{}, true
}

// finish fills in what every plan carries.
func (s *Session) finish(p Plan) Plan {
	if p.Messages == nil {
		p.Messages = s.view()
	}
	p.Estimate = s.estimate()
	if p.Event != Note {
		s.lastChars = s.cfg.PrefixChars + s.size
		s.carriedUpTo = len(s.entries)
	}
	b := s.Budget()
	limit := positiveMin(s.cfg.MaxTokens, s.cfg.OutputLimit)
	if b.Window > 0 {
		p.MaxTokens = b.MaxTokens(p.Estimate, limit)
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
func (s *Session) currentStart() int {
	i := len(s.entries) - 1
	for i > 0 && s.log[i].Role == Tool {
		i--
	}
	return max(min(i, s.sent), s.foldedUpTo, 0)
}

// turnStart is the user message that opened the current turn, or -1.
func (s *Session) turnStart() int { return s.lastUser }

// freshResults are the current round's tool results no request has
// carried, in order: the ones an append may still cut.
func (s *Session) freshResults() []int {
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
func (s *Session) roundResults() []int {
	var out []int
	for i := s.currentStart(); i < len(s.entries); i++ {
		if s.log[i].Role == Tool && i != s.taskPayload {
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

// shrink is one shrink event: shed down to the target, fold if that is not
// enough, cut the current round's new results if even that is not, and
// tell the model what went.
func (s *Session) shrink(b Budget, emergency bool) Plan {
	s.electTaskPayload()
	cands := s.shedCandidates()
	target := b.ShedTarget
	// Shedding and folding aim below the target by the notice's room, so
	// that telling the model what went does not push the request back over.
	goal := target - s.est.New(noticeRoom)

	// Will shedding alone reach the goal? If not, the fold comes, and the
	// model writes its note first — unless the request is already too
	// large to carry the question.
	size, fresh := s.size, s.fresh
	for _, c := range cands {
		size, fresh = s.afterShed(c, size, fresh)
		if s.price(size, fresh) <= goal {
			break
		}
	}
	willFold := s.price(size, fresh) > goal || s.compact
	if willFold && !emergency && !s.noteAsked && s.foldable() {
		msgs, est := s.noteMessages()
		if est+noteReply <= b.Window {
			s.noteAsked = true
			p := s.finish(Plan{Event: Note, Messages: msgs})
			p.Estimate = est
			p.MaxTokens = b.MaxTokens(est, positiveMin(s.cfg.MaxTokens, s.cfg.OutputLimit))
			return p
		}
	}

	p := Plan{Event: Shed}
	if emergency {
		p.Event = Emergency
	}
	if s.compact {
		// Asked for: fold now, whatever the size; nothing need be shed.
		s.compact = false
		p.Event = Fold
		p.Folded, p.RecapChars = s.fold(b, goal)
		s.note, s.noteAsked = "", false
		s.attachNotice(p, false)
		return s.finish(p)
	}
	for _, c := range cands {
		if s.estimate() <= goal {
			break
		}
		if c.what == shedPayload {
			if _, keep := s.summarize(c.index); keep {
				continue
			}
		}
		p.Shed = append(p.Shed, s.applyShed(c))
		p.ShedChars += p.Shed[len(p.Shed)-1].Chars
	}
	if over := s.estimate() - goal; over > 0 {
		p.Short = over
		if p.Event == Shed {
			p.Event = Fold
		}
		p.Folded, p.RecapChars = s.fold(b, goal)
	}
	s.note, s.noteAsked = "", false
	s.attachNotice(p, emergency)
	if s.estimate() > target {
		p.Cut = s.fit(s.roundResults(), target)
	}
	if s.estimate() > target {
		p.TooSmall = true
		p.Problem = fmt.Sprintf("window too small: after shedding and folding the request still needs %d tokens, above the shed target of %d in a %d-token window; use a larger window or minimal mode",
			s.estimate(), target, b.Window)
	}
	return s.finish(p)
}

// noteMessages is the note round's request: the view up to the current
// round — what the model has seen, which the engine has cached — then the
// current round with its results shed to their summaries (they may be
// what pushed the request over, and they stay whole after the fold), then
// the question. It is an append of the last request sent. It returns the
// request's estimate.
func (s *Session) noteMessages() ([]Message, int) {
	cur := s.currentStart()
	k, size, fresh := len(s.slots), s.size, s.fresh
	for k > 0 && s.slots[k-1] >= cur {
		k--
		e := &s.entries[s.slots[k]]
		size -= e.size
		fresh -= e.fresh
	}
	msgs := make([]Message, k, len(s.slots)+1)
	copy(msgs, s.msgs[:k])
	for _, i := range s.slots[k:] {
		m := s.msgs[len(msgs)]
		if m.Role == Tool {
			if sum, keep := s.summarize(i); !keep {
				m.Content = sum
			}
		}
		msgs = append(msgs, m)
		n := sizeOf(m)
		size += n
		fresh += n
	}
	q := Message{Role: User, Content: NoteInstruction}
	msgs = append(msgs, q)
	size += sizeOf(q)
	fresh += sizeOf(q)
	s.lastChars = s.cfg.PrefixChars + size
	s.carriedUpTo = cur
	return msgs, s.price(size, fresh)
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
		return name + " " + clip(m.Payload.Path, 120)
	}
	return name
}

// attachNotice tells the model, at the end of the newest message, what
// this event removed and how to get it back.
func (s *Session) attachNotice(p Plan, emergency bool) {
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
		if p.Folded > 0 {
			fmt.Fprintf(&b, "\n\n[Context: %d earlier messages were folded into the recap at the start of the conversation.]", p.Folded)
		}
	}
	if b.Len() == 0 || len(s.entries) == 0 {
		return
	}
	notice := b.String()
	if len(notice) > noticeRoom {
		notice = clip(notice, noticeRoom-2) + "…]"
	}
	last := len(s.entries) - 1
	s.entries[last].notice += notice
	s.change(last, s.slotOf(last), false)
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
func (s *Session) planNoWindow() Plan {
	cur := s.currentStart()
	for i := s.collapsed; i < cur; i++ {
		e := &s.entries[i]
		if s.log[i].Role != Tool || e.form == summarized {
			continue
		}
		if sum, keep := s.summarize(i); !keep {
			e.form, e.text = summarized, sum
			s.change(i, s.slotOf(i), true)
		}
	}
	s.collapsed = max(s.collapsed, cur)
	keep := s.cfg.ReasoningRounds
	for i := len(s.entries) - 1; i >= s.foldedUpTo; i-- {
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
		s.change(i, s.slotOf(i), false)
	}
	return s.finish(Plan{Event: Append})
}
