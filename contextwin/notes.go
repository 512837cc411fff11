package contextwin

import "slices"

// noteResults lays out, in msgs (the view's messages), the current
// round's results for the note round. Every result of the round no
// request carried (every one, when the request is over limit) stands as
// its summary; then the newest ones, newest first, take back their text
// while the request and the question (extra bytes) fit in limit tokens
// and the share bytes allow: whole, or their head and tail cut to fit
// (cutMiddle), never under minCut bytes. It returns the request's size
// and fresh bytes without the question.
//
// The note is written from the newest results, which the summaries alone
// hid from it. What it carries of them costs twice: the fold after the
// note changes the request before them, and the engine prefills them
// again. The share (noteShare) bounds that.
func (s *Planner) noteResults(msgs []Message, cur, limit, share, extra int) (size, fresh int) {
	size, fresh = s.counted()
	for _, it := range s.view.items[len(msgs):] { // a new ask left out
		size -= it.size
		fresh -= it.fresh
	}
	var round []int // view items of the round's results that give way, newest first
	// The results a request carried already stay as they were sent
	// (the note round is an append), unless the request is over.
	over := s.price(size+extra, fresh+extra) > limit
	for k := s.view.Len() - 1; k >= 0 && s.view.items[k].of >= cur; k-- {
		it := &s.view.items[k]
		if k >= len(msgs) || it.msg.Role != Tool || it.of < s.sent && !over {
			continue
		}
		sum, keep := s.summarize(it.of)
		if keep {
			continue
		}
		m := it.msg
		m.Content = sum
		msgs[k] = m
		size += sizeOf(m) - it.size
		fresh += sizeOf(m) - it.fresh
		round = append(round, k)
	}
	for _, k := range round {
		room := min(s.est.NewChars(limit-s.price(size+extra, fresh+extra))-32, share)
		it := &s.view.items[k]
		grow := it.size - sizeOf(msgs[k])
		if room < minCut || grow <= 0 {
			break
		}
		m := it.msg
		if grow > room {
			m.Content = cutMiddle(it.msg.Content, len(msgs[k].Content)+room, s.log[it.of].Payload)
		}
		d := sizeOf(m) - sizeOf(msgs[k])
		share -= d
		size += d
		fresh += d
		msgs[k] = m
	}
	return size, fresh
}

// noteShare is what the note round carries of the round's results,
// beyond their summaries, in bytes: a quarter of the recap's budget
// (noteSharePart), from a window of noteShareFrom tokens on. On the
// replay (dense) it cost the rows 0.02–0.03 of their ratio at 32k and
// 0–0.03 at 128k, all within their bounds; at 16k it cost 0.02–0.03 too,
// which took long-logs past its bound (1.12), so a 16k window's note
// round carries summaries only, as before.
func noteShare(b Budget, e Estimator) int {
	if b.Window < noteShareFrom {
		return 0
	}
	return e.NewChars(b.Recap / noteSharePart)
}

const (
	noteSharePart = 4
	noteShareFrom = 24000
)

// noteMessages is the note round's request: the view up to the current
// round — what the model has seen, which the engine has cached — then the
// current round, whole where it fits (wholeNote), else with its newest
// results as much as a share of the room allows (noteResults: the note is
// written from them) and the others as their summaries, then the
// question. It is an append of the last request sent. It returns the
// request's estimate.
func (s *Planner) noteMessages(b Budget) ([]Message, int) {
	cur := s.currentStart()
	q := Message{Role: User, Content: NoteInstruction}
	msgs := slices.Clone(s.view.Messages()) // written by noteResults and askNote: the view's are lent, not to be changed
	// A new ask of the user's is not the note's: the note is of the work
	// done so far, and the fold after it keeps the ask after its recap,
	// where the engine prefills it anyway. Carried by the note round too,
	// a pasted log would be prefilled twice. The fold then comes at once.
	askN, askFresh := 0, 0
	if k := s.newAsk(); k >= 0 {
		for _, it := range s.view.items[k:] {
			askN += it.size
			askFresh += it.fresh
		}
		msgs = msgs[:k]
	}
	// While the request as it stands and the question fit the usable
	// room, and the note the window, the note round is that request and
	// the question: the note is written from everything the model has,
	// and the round's request after it, the same, is then cached to its
	// end (holdFold). Otherwise the round's new results give way.
	if whole, ok := s.wholeNote(q, askN, askFresh); ok && whole <= b.Usable && whole+s.noteRoom() <= b.Window {
		msgs = s.askNote(msgs, q)
		s.last.chars = s.cfg.PrefixChars + s.countedSize() - askN + sizeOf(q)
		s.last.carriedUpTo = cur
		s.note.whole = askN == 0
		return msgs, whole
	}
	s.note.whole = false
	size, fresh := s.noteResults(msgs, cur, b.Usable, noteShare(b, s.est), sizeOf(q))
	msgs = s.askNote(msgs, q)
	size += sizeOf(q)
	fresh += sizeOf(q)
	s.last.chars = s.cfg.PrefixChars + size
	s.last.carriedUpTo = cur
	return msgs, s.price(size, fresh)
}

// newAsk is the view index of a message of the user's that no request
// has carried yet, or -1: the ask that opens a turn, or one the user
// sent into the run.
func (s *Planner) newAsk() int {
	i := s.lastUser
	if i < 0 || i < s.sent || !s.isVerbatimUser(i) {
		return -1
	}
	return s.view.find(i)
}

// holdFold reports whether the fold o, its note in hand, waits a round
// (see shrink), and the request's size as the engine counted it: not an
// emergency nor a compaction asked for, held once only, after a note
// round that carried the request whole, and within the window. It marks
// the fold held.
func (s *Planner) holdFold(b Budget, o option, emergency bool) (size int, ok bool) {
	if o.fold == 0 || emergency || s.note.compact || s.note.held || !s.note.whole || s.note.text == "" {
		return 0, false
	}
	// The engine counted the note's request, this one and the question:
	// its count is firmer than any estimate of the new results.
	size = s.estimate()
	if r := s.last.reported; r > 0 {
		size = r
	}
	if len(s.freshResults()) == 0 || size > b.Usable {
		return 0, false
	}
	s.note.held = true
	return size, true
}

// freshDoubt: a whole note round takes the new results' likely count one
// in so many larger (wholeNote).
const freshDoubt = 8

// wholeNote is the request's count with the question q as a note round
// carrying it whole, less a new ask left out (askN bytes, askFresh of
// them new), would be, and whether one may: with the engine's counts to
// go by (the cautious estimate, blind, prices the new results at the
// densest text there is). On an engine that restarts from checkpoints the
// note round is preceded by the request itself (noteCheckpoint), so that
// the round's request after it restarts where the question began; but
// not where the question rides at the end of the last message (a turn
// template, noteRides): the two requests then part inside that message,
// before the tokens that close it, and the engine's checkpoint at the end
// of the request stands after the parting (held there too, on the
// replay with --reasoning turn, the recurrent engine prefilled 0.00-0.05
// of growth more at 16k, and from 0.07 less to 0.02 more at 32k); nor
// once a plant was seen to miss (learnNotePlant).
func (s *Planner) wholeNote(q Message, askN, askFresh int) (whole int, ok bool) {
	if s.cache.model.Class == CacheCheckpointed && (s.noteRides(s.view.Messages()) || s.cache.notePlant.failed) {
		return 0, false
	}
	// The new results are priced at the learned ratio; they may be
	// denser than what was learned. A whole note round the engine then
	// counts over the usable room cannot be held, and the fold that comes
	// at once pays them twice: they are taken an eighth larger.
	size, fresh := s.counted()
	size, fresh = size-askN, fresh-askFresh
	n := s.est.Known(size+s.cfg.PrefixChars) + s.est.Known(fresh)/freshDoubt
	if s.est.Blind {
		n = s.price(size, fresh)
	}
	return n + s.est.Known(sizeOf(q)), true
}

// noteCheckpoint is the checkpoint request that goes before a note round
// carrying the request whole, on an engine that restarts from
// checkpoints: the request as it stands, which is what the round after
// the note sends again (holdFold). The engine takes its checkpoint a few
// tokens before that request's end; the note round and the round after it
// both restart there. Without it the engine's newest checkpoint before
// the question stands a micro-batch before the note round's end, and the
// round after the note prefilled that stretch again (about 470 tokens a
// note on the replay). Nil on any other engine, and for a note round
// that leaves the results or a new ask out, which no later request sends
// as they stand.
//
// That checkpoint stands before where the note round parts from the
// request only where the chat template adds at most a few tokens after a
// request's last message (its generation prompt: 2-4 tokens in the
// common templates); where a note round restarted well before the end of
// its checkpoint request, the engine's template adds more, and the note
// rounds after it show the results as their summaries again
// (learnNotePlant).
func (s *Planner) noteCheckpoint() [][]Message {
	if s.cache.model.Class != CacheCheckpointed || !s.note.whole {
		return nil
	}
	s.cache.notePlant.asked = true
	return [][]Message{s.view.Messages()}
}

// learnNotePlant takes the figures of a request after a note round's
// checkpoint request (noteCheckpoint, whose length ObserveCheckpoint
// keeps): the note round's, which restarted from token from. One that
// restarted more than notePlantSlack tokens before the checkpoint
// request's end says the plant does not serve on this engine.
func (s *Planner) learnNotePlant(from int, u Usage) {
	np := &s.cache.notePlant
	if np.tokens > 0 && u.CachedKnown && from+notePlantSlack < np.tokens {
		np.failed = true
	}
	np.asked, np.tokens = false, 0
}

// notePlantSlack is how far before the end of a note round's checkpoint
// request the note round may restart, in tokens: the checkpoint the
// engine takes 4 tokens before a prompt's end, and a generation prompt
// of up to a dozen tokens past where the two requests part.
const notePlantSlack = 16
