package contextwin

import (
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// foldPreamble opens the recap message.
const foldPreamble = "[The conversation before this point was folded to stay inside the context window. " +
	"Nothing is lost: read files and run searches again for anything you need in full.]\n\n"

// foldable reports whether a fold would fold anything: some group starts
// between the recap and the current round — the first one after the
// recap too, which a fold at the current round takes, unless it is one of
// the user's messages, which the recap would carry word for word anyway.
func (s *Planner) foldable() bool {
	cur := s.currentStart()
	for i := s.fold.upTo; i < cur; i++ {
		if s.log[i].Role != Tool && (i > s.fold.upTo || !s.isVerbatimUser(i)) {
			return true
		}
	}
	return false
}

// entryTokens is entry i's share of the estimate as it stands.
func (s *Planner) entryTokens(i int) int {
	e := &s.entries[i]
	return s.est.Known(e.size-e.fresh) + s.est.New(e.fresh)
}

// foldAt folds the turns before boundary (a group start, so no result is
// parted from its call) into the recap. The recap carries the user's
// messages word for word — the task first, then every later one — and the
// task's payload. When the recap has room left, the newly folded turns are
// appended to it, and the request stays cached up to its end; otherwise a
// new recap replaces it, merging the old one's lists, in three quarters of
// its budget, so that the next folds can append again (on an engine that
// restarts from checkpoints, in a middle recap's room, and none appends:
// frontRewrites). It returns how many messages it folded and the recap
// message's size.
func (s *Planner) foldAt(b Budget, boundary int) (folded, recapChars int) {
	if boundary <= s.fold.upTo {
		return 0, 0
	}
	budget := s.est.NewChars(b.Recap)
	turns := s.log[s.fold.upTo:boundary]
	if s.fold.midTo > 0 {
		// The middle recap's turns are in s.fold.recap already: the fold takes
		// the turns on either side of them, and the middle recap goes.
		turns = append(slices.Clip(s.log[s.fold.upTo:s.fold.midFrom]), s.log[s.fold.midTo:boundary]...)
	}
	// The recap's fields merge the old one's, for the document the user
	// may edit and for the next rewrite.
	// What the user said, word for word, stands before a rewritten recap:
	// the facts it states are not repeated in it.
	front, frontN := s.verbatimText(0, boundary)
	r := BuildRecap(RecapInput{Note: s.note.text, Previous: s.fold.recap, Folded: turns, Budget: budget * 3 / 4, Shown: front})
	var text strings.Builder
	verbatim := 0
	mapNews := ""
	if s.cfg.MapUpdate != nil {
		mapNews = s.cfg.MapUpdate()
	}
	wasSteady := s.fold.front.steady
	v, n := s.verbatimText(s.fold.upTo, boundary)
	// A fold that takes in a message of the user's rewrites a recap laid
	// out in two messages (splitFront): what the user said belongs in the
	// user's part, which an appended part follows.
	appended := s.canAppend(budget) && !s.mustRewrite(v != "")
	s.fold.rewrote, s.fold.frontMoved = !appended, true
	s.fold.folds++
	s.fold.fronts++
	if appended {
		verbatim, mapNews = s.appendFront(&text, r, turns, budget, v, n, mapNews)
	} else {
		// What the user said comes first, word for word: it is the same
		// from one rewrite to the next, so a rewrite changes the request
		// only after it (the engine keeps it cached).
		s.fold.front.steady = writeFront(&text, front)
		body := r
		if room := s.frontRoom(budget, &r, front); room != budget*3/4 {
			// A recap rewritten at every fold, or one widened for what it
			// must keep: what the repo map has learnt takes its share of
			// the room too.
			room = max(room-len(mapNews), neededRoom(&r, front))
			body = BuildRecap(RecapInput{Note: s.note.text, Previous: s.fold.recap, Folded: turns, Budget: room, Shown: front})
		}
		text.WriteString(body.Text)
		s.fold.front.text = len(body.Text)
		verbatim = frontN
	}
	if mapNews != "" {
		text.WriteString("\n\n" + mapHeading)
		text.WriteString(mapNews)
		if !appended {
			s.fold.mapSent = mapNews
		}
	}

	if !appended {
		s.fold.kept = s.keptOfLast(text.String(), wasSteady)
	}
	s.carryUserText(appended, boundary)
	s.fold.recap = &r
	s.fold.front.msg = Message{Role: User, Content: text.String()}
	s.fold.front.verbatim = verbatim
	folded = boundary - s.fold.upTo
	if s.fold.midTo > 0 {
		folded -= s.fold.midTo - s.fold.midFrom
		s.fold.midFrom, s.fold.midTo, s.fold.mid = 0, 0, CarriedRecap{}
	}
	s.fold.upTo = boundary
	s.rebuild()
	return folded, text.Len()
}

// midPreamble opens the middle recap.
const midPreamble = "[The turns between the messages above and the ones below were folded to stay inside the context window. " +
	"Nothing is lost: read files and run searches again for anything you need in full.]\n\n"

// mustRewrite reports whether a fold that takes in words of the user's
// (takes) must rewrite the front recap rather than append to it: on an
// engine that restarts from checkpoints, whose recap is laid out in two
// messages (splitFront), they must join the user's part; and when the
// recap carries much more of the user's words than their forms now take
// (userTextFull).
func (s *Planner) mustRewrite(takes bool) bool {
	return takes && (s.cache.model.Class == CacheCheckpointed || s.userTextFull())
}

// canMid reports whether the recaps have room, in a budget of so many
// bytes, for a fold into the middle recap.
func (s *Planner) canMid(budget int) bool {
	return s.fold.front.text+s.fold.mid.text+len(appendHeading)+2+budget/8 <= budget
}

// midRoom is the room the middle recap's next part has, in bytes: what
// the recaps leave of the budget, at most a share of it, so that several
// folds into the middle recap go before the front one must be rewritten.
func (s *Planner) midRoom(budget int) int {
	return min(budget/midParts, budget-s.fold.front.text-s.fold.mid.text-len(appendHeading)-2)
}

// midParts is how many parts of the most room the recap budget holds.
const midParts = 8

// foldMiddle folds the turns in [from, boundary) (group starts) into the
// middle recap, which stands after the older turns, left as they were
// sent: the request changes only after them. When there is a middle
// recap already, the turns from its end on are appended to it and from
// is its end. Like an appended recap, it carries the note's exact facts
// and the user's messages word for word; s.fold.recap takes in the turns for
// the next rewrite of the front recap. It returns how many messages it
// folded and the middle recap's size.
func (s *Planner) foldMiddle(b Budget, from, boundary int) (folded, chars int) {
	s.fold.rewrote, s.fold.frontMoved = false, false
	budget := s.est.NewChars(b.Recap)
	k := s.view.find(middleRecap)
	if s.fold.midTo > 0 {
		from = s.fold.midTo
	} else {
		k = s.view.find(from)
	}
	if k < 0 || boundary <= from {
		return 0, 0
	}
	s.fold.folds++
	turns := s.log[from:boundary]
	r := BuildRecap(RecapInput{Note: s.note.text, Previous: s.fold.recap, Folded: turns, Budget: budget * 3 / 4})
	v, n := s.verbatimText(from, boundary)
	shown := s.fold.front.msg.Content + s.fold.mid.msg.Content + v
	// A part gets its share of the budget, widened, as a rewrite's room
	// is (rewriteRoomFor), to what the facts and the files changed that
	// the request does not state yet need, while the budget holds them.
	room := max(s.midRoom(budget), min(neededRoom(&r, shown), budget-s.fold.front.text-s.fold.mid.text-len(appendHeading)-2))
	part := BuildRecap(RecapInput{Note: s.partNote(r.Ledger, shown), Folded: turns, Budget: room, Shown: shown, Part: true})
	var text strings.Builder
	verbatim := 0
	if s.fold.midTo > 0 {
		s.fold.mid.text += appendPart(&text, s.fold.mid.msg.Content, part.Text)
		verbatim = len(s.fold.mid.msg.Content)
	} else {
		text.WriteString(midPreamble)
		text.WriteString(part.Text)
		s.fold.mid.text = len(part.Text)
		s.fold.midFrom = from
	}
	text.WriteString(v)
	verbatim += n
	s.fold.recap = &r
	s.fold.midTo = boundary
	s.rebuildFrom(k, Message{Role: User, Content: text.String()}, verbatim)
	return boundary - from, text.Len()
}

// rewriteMiddle folds the turns the middle recap stands for and those
// after it up to boundary (a group start) into a new middle recap, in
// rewriteRoom, that stands where the old one stood, or at the earlier
// start from (one of the older turns, which it then takes in too): the
// request changes at its start, and the older turns before it stay as
// they were sent.
// It carries the note, the ledger's facts the request does not show
// otherwise, what happened most recently, and what the user said in
// those turns word for word. It returns how many messages it folded and
// the middle recap's size.
func (s *Planner) rewriteMiddle(b Budget, from, boundary int) (folded, chars int) {
	s.fold.rewrote, s.fold.frontMoved = false, false
	budget := s.est.NewChars(b.Recap)
	k := s.view.find(middleRecap)
	if s.fold.midTo == 0 || k < 0 || boundary <= s.fold.midTo {
		return 0, 0
	}
	s.fold.folds++
	turns := s.log[s.fold.midTo:boundary]
	folded = boundary - s.fold.midTo
	if from < s.fold.midFrom {
		// It starts earlier (midRewrites): the older turns from there go
		// into it too, as a fold of the front takes them.
		if j := s.view.find(from); j >= 0 {
			turns = append(slices.Clip(s.log[from:s.fold.midFrom]), turns...)
			folded += s.fold.midFrom - from
			k, s.fold.midFrom = j, from
		}
	}
	r := BuildRecap(RecapInput{Note: s.note.text, Previous: s.fold.recap, Folded: turns, Budget: budget * 3 / 4})
	v, n := s.verbatimText(s.fold.midFrom, boundary)
	shown := s.fold.front.msg.Content + v
	start := s.tokensAt(s.cfg.PrefixChars + s.view.sizeBefore(k))
	body := BuildRecap(RecapInput{Note: s.note.text, Previous: s.fold.recap, Folded: turns, Budget: s.rewriteRoomFor(budget, start, &r, shown), Shown: shown})
	// What the user said comes first, as in a rewritten front recap: the
	// next rewrite keeps it, and the request stays cached up to its end.
	var text strings.Builder
	writeLead(&text, midPreamble, v)
	text.WriteString(body.Text)
	s.fold.mid.text = len(body.Text)
	s.fold.recap = &r
	s.fold.midTo = boundary
	s.rebuildFrom(k, Message{Role: User, Content: text.String()}, n)
	return folded, text.Len()
}

// rewriteRoomFor is rewriteRoom, widened to what r's facts and files
// changed that shown does not state need (neededRoom): a rewritten middle
// recap drops no fact while the recap budget holds them.
func (s *Planner) rewriteRoomFor(budget, start int, r *Recap, shown string) int {
	return max(s.rewriteRoom(budget, start), min(neededRoom(r, shown), budget-s.fold.front.text-len(appendHeading)-2))
}

// neededRoom is the room a recap's text needs for what it must not drop
// while its budget holds it: the facts of r's ledger that shown does not
// state (factsRoom) and the line naming the files changed
// (changedNames), beside the least share the note keeps (trailReserve),
// which the names line leaves it when there are files to name. A nil r
// needs none.
func neededRoom(r *Recap, shown string) int {
	if r == nil {
		return factsRoom(nil, shown)
	}
	n := 0
	for _, f := range r.Files {
		if f.Edited && !strings.Contains(shown, f.Path) {
			n += len(f.Path) + 2
		}
	}
	if n > 0 {
		n += len(changedNamesHead) + 1
	}
	need := factsRoom(r.Ledger, shown) + n
	if r.Note != "" && n > 0 {
		need += need*noteLeast/(100-noteLeast) + len(noteHead) + 3
	}
	return need
}

// factsRoom is the room a recap's text needs for the ledger's facts that
// shown does not state: they take at most factPercent of it (the note
// keeps the rest).
func factsRoom(ledger []Fact, shown string) int {
	facts := len("\nFacts:")
	for _, f := range unshown(ledger, shown) {
		facts += len("\n- ") + len(f.Key) + len(": ") + len(f.Value)
	}
	return len(recapHeader) + len("\n…") + facts*100/factPercent + 1
}

// frontRoom is the room, in bytes, of the text of a front recap a fold
// rewrites, in a recap budget of so many bytes: three quarters of it, so
// that the next folds append to it and the request stays cached up to
// its end; on an engine that restarts from checkpoints, where every fold
// rewrites it (frontRewrites) and prefills it again, what a middle recap
// rewritten in place keeps (rewriteShare). Either is widened, up to the
// whole budget, to the facts that shown does not state and the files
// changed (neededRoom): at three quarters of a 16k window's budget, 27
// files changed and 18 facts did not fit, and the oldest file went
// unnamed.
func (s *Planner) frontRoom(budget int, r *Recap, shown string) int {
	room := budget * 3 / 4
	if s.frontRewrites() {
		room = budget * rewriteShare / 8
	}
	return max(room, min(neededRoom(r, shown), budget))
}

// unshown are the facts that shown does not state as "key: value".
func unshown(facts []Fact, shown string) []Fact {
	var out []Fact
	for _, f := range facts {
		if !strings.Contains(shown, f.Key+": "+f.Value) {
			out = append(out, f)
		}
	}
	return out
}

// factsText writes facts one a line, as a note states them.
func factsText(facts []Fact) string {
	var b strings.Builder
	for _, f := range facts {
		b.WriteString(f.Key + ": " + f.Value + "\n")
	}
	return b.String()
}

// verbatimText is what the recap carries word for word of the entries in
// [from, to): the user's messages — the first of the session as the task,
// each whole while it fits its room (carriedUser) — and the task's
// payload as it was sent. Their bytes were carried before,
// so they are not priced as new; n counts them.
func (s *Planner) verbatimText(from, to int) (text string, n int) {
	var b strings.Builder
	u := s.indexUsers()
	for _, i := range u.at[sort.SearchInts(u.at, from):] {
		if i >= to {
			break
		}
		if blk := s.userBlock(i); blk != "" {
			b.WriteString("\n\n" + blk)
			n += len(blk)
		}
	}
	if p := s.task.payload; p >= from && p < to {
		sent := s.sentContent(p)
		b.WriteString("\n\nThe payload that defines the task (" + describe(s.log, p) + "), verbatim:\n")
		b.WriteString(sent)
		n += len(sent)
	}
	return b.String(), n
}

// writeFront opens a rewritten recap: the preamble, then the verbatim
// text (verbatimText's) of what the user said, then room for the rest. It
// returns the bytes it wrote, which stay the same in the next rewrite.
func writeFront(b *strings.Builder, verbatim string) int {
	return writeLead(b, foldPreamble, verbatim)
}

// writeLead writes preamble, then the verbatim text (verbatimText's) of
// what the user said, and returns the bytes it wrote.
func writeLead(b *strings.Builder, preamble, verbatim string) int {
	b.WriteString(preamble)
	if v := strings.TrimPrefix(verbatim, "\n\n"); v != "" {
		b.WriteString(v)
		b.WriteString("\n\n")
	}
	return b.Len()
}

// sentContent is entry i's content as requests carried it: whole, or its
// head and tail when it was cut to fit — never more than was sent.
func (s *Planner) sentContent(i int) string {
	if e := &s.entries[i]; e.form == cutToFit {
		return e.text
	}
	return s.log[i].Content
}

// newBlocks is the file blocks of the map's news (a line naming a file,
// then its indented lines) that carried does not hold word for word: what
// a part appended to the recap adds of it.
func newBlocks(news, carried string) string {
	var b strings.Builder
	start := 0
	for i := 0; i <= len(news); i++ {
		if i < len(news) && (i == start || news[i-1] != '\n' || news[i] == ' ' || news[i] == '\t') {
			continue
		}
		blk := news[start:i]
		if !strings.Contains(carried, strings.TrimRight(blk, "\n")) {
			b.WriteString(blk)
		}
		start = i
	}
	return strings.TrimRight(b.String(), "\n")
}

// mapHeading opens the repo map's news in the recap.
const mapHeading = "The repository map has learnt since the start (files new or changed):\n"

// appendFront appends to the front recap, as it was sent, what a fold up
// to turns adds: its room is small, so the fold's note and the ledger's
// exact facts the request does not show yet go first (partNote), then
// what happened; the next rewrite carries the note again (r.Note) and,
// once a newer note replaces it, its findings. A middle recap the fold
// takes in goes from the request: its facts are in the ledger, and so
// come along. v (n bytes) is what the user said in the turns, word for
// word. It returns the bytes carried word for word and the repo map's
// news still to write.
func (s *Planner) appendFront(text *strings.Builder, r Recap, turns []Message, budget int, v string, n int, mapNews string) (verbatim int, news string) {
	shown := s.fold.front.msg.Content + v
	part := BuildRecap(RecapInput{Note: s.partNote(r.Ledger, shown), Folded: turns, Budget: budget - s.fold.front.text - len(appendHeading) - 2,
		Shown: shown, Part: true})
	s.fold.front.text += appendPart(text, s.fold.front.msg.Content, part.Text)
	verbatim = len(s.fold.front.msg.Content)
	text.WriteString(v)
	verbatim += n
	if mapNews == s.fold.mapSent {
		return verbatim, "" // carried already
	}
	s.fold.mapSent = mapNews
	return verbatim, newBlocks(mapNews, s.fold.front.msg.Content)
}

// keptOfLast is how much of a rewritten recap's text after its steady
// part kept the last one's, to a line's end: what the next rewrite is
// likely to keep too (frontCheckpoints). wasSteady is where the last
// one's steady part ended.
func (s *Planner) keptOfLast(text string, wasSteady int) int {
	old, cur := "", text[s.fold.front.steady:]
	if prev := s.fold.front.msg.Content; wasSteady > 0 && wasSteady <= len(prev) {
		old = prev[wasSteady:]
	}
	return strings.LastIndexByte(cur[:commonPrefix(old, cur)], '\n') + 1
}

// appendPart writes a recap message as it was sent, then what a fold
// appends to it (part, without its header); it returns the bytes of recap
// text it added.
func appendPart(text *strings.Builder, old, part string) int {
	added := strings.TrimPrefix(part, recapHeader+"\n")
	text.WriteString(old)
	text.WriteString("\n\n" + appendHeading)
	text.WriteString(added)
	return len(appendHeading) + 2 + len(added)
}

// appendHeading opens what a fold appends to the recap.
const appendHeading = "Folded since:\n"

// canAppend reports whether the recap has room, in a budget of so many
// bytes, for another fold's turns after it.
func (s *Planner) canAppend(budget int) bool {
	if s.frontRewrites() {
		return false
	}
	return s.fold.front.msg.Content != "" && s.fold.front.text+s.fold.mid.text+len(appendHeading)+2+budget/8 <= budget
}

// The headings of the user's messages in the recap: the task, then what
// they said after it.
const (
	taskHeading  = "The task, verbatim:\n"
	userHeading  = "Then the user said, verbatim:\n"
	shortHeading = "Then the user said, shortened to fit:\n"
	factsHeading = "Earlier the user stated (their whole words are named under Happened):\n"
)

// electTaskPayload picks, once per turn, the result that defines the task:
// one the agent marked, else the first result of the turn about a document or
// page the user's request names. It is never shed, and a fold carries it
// verbatim.
func (s *Planner) electTaskPayload() {
	turn := s.turnStart()
	if turn == s.task.turn {
		return
	}
	s.task.turn, s.task.payload = turn, -1
	if turn < 0 {
		return
	}
	for i := turn + 1; i < len(s.entries); i++ {
		if m := s.log[i]; m.Role == Tool && m.Payload.Task {
			s.task.payload = i
			return
		}
	}
	for i := turn + 1; i < len(s.entries); i++ {
		if s.definesTask(i, turn) {
			s.task.payload = i
			return
		}
	}
}

// definesTask reports whether result i is a page or a document (not
// source code: the code a task names is what it changes, which the
// recap's files and a shed read's outline keep) that the user message
// at turn names in the user's own words (ownWords): a path inside a
// pasted log or trace is where something happened, not what the task is
// about.
func (s *Planner) definesTask(i, turn int) bool {
	m := s.log[i]
	if m.Role != Tool || turn < 0 {
		return false
	}
	if m.Payload.Task {
		return true
	}
	p := m.Payload.Path
	if (m.Payload.Kind != Read && m.Payload.Kind != Fetch) || len(p) < 4 {
		return false
	}
	if k := outlineFor(p); m.Payload.Kind == Read && (k == outlineCode || k == outlineCFamily) {
		return false // source to change, not a document that says what to do
	}
	request := ownWords(s.log[turn].Content)
	return names(request, p) || len(path.Base(p)) >= 4 && names(request, path.Base(p))
}

// ownWords is a user message without its fenced blocks (``` or ~~~):
// what the user wrote rather than pasted.
func ownWords(text string) string {
	if !strings.Contains(text, "```") && !strings.Contains(text, "~~~") {
		return text
	}
	var b strings.Builder
	fence := ""
	for line := range strings.Lines(text) {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			switch f := t[:3]; fence {
			case "":
				fence = f
			case f:
				fence = ""
			}
			continue
		}
		if fence == "" {
			b.WriteString(line)
		}
	}
	return b.String()
}

// names reports whether text names p other than as a position (p:12, as
// a stack trace or a compiler's message gives one).
func names(text, p string) bool {
	for rest := text; ; {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
		if len(rest) < 2 || rest[0] != ':' || rest[1] < '0' || rest[1] > '9' {
			return true
		}
	}
}

// carriedText is text whole when it fits in room bytes, else its head
// (three fifths of the room) and its tail (three tenths), cut at line
// ends where one is near, with a line between them that says how much
// was left out, followed by the lines of what was left out that read as
// exact facts ("key: value", as a note states them), up to a quarter of
// the room more or maxFactsKept, whichever is larger: what the user
// stated exactly survives the cut.
func carriedText(text string, room int) string {
	return cutWithFacts(text, room, "to fit the recap")
}

// cutWithFacts is carriedText's cut, its marker saying why.
func cutWithFacts(text string, room int, why string) string {
	if len(text) <= room {
		return text
	}
	head := headUpTo(text, room*3/5)
	if i := strings.LastIndexByte(head, '\n'); i >= len(head)/2 {
		head = head[:i+1]
	}
	tail := tailUpTo(text[len(head):], room*3/10)
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i < len(tail)/2 {
		tail = tail[i+1:]
	}
	middle := text[len(head) : len(text)-len(tail)]
	var facts strings.Builder
	for line := range strings.Lines(middle) {
		line = strings.TrimSpace(line)
		if _, ok := factOf(line); ok && facts.Len()+len(line)+1 <= max(room/4, maxFactsKept) {
			facts.WriteString(line + "\n")
		}
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(head, "\n"))
	b.WriteString("\n[… " + strconv.Itoa(len(middle)) + " bytes of this message left out " + why)
	if facts.Len() > 0 {
		b.WriteString("; the exact facts among them:]\n")
		b.WriteString(facts.String())
		b.WriteString("[…]\n")
	} else {
		b.WriteString(" …]\n")
	}
	b.WriteString(tail)
	return b.String()
}

// frontRewrites reports whether every fold of the front rewrites its
// recap, at a middle recap's size (frontRoom), and none appends to it: on
// an engine that restarts from checkpoints. There the checkpoint at the
// recap's end, within --checkpoint-min-step of the prefix's, is the first
// a full slot thins, so an appended part is prefilled with the whole
// recap anyway; and where a smaller step told keeps it, a recap appended
// to until full is prefilled whole, at three quarters of the budget, at
// the rewrite that follows. Rewritten at every fold, the generated
// sessions prefilled less either way (told the step: median 1.15 to 1.13
// at 16k, 1.08 to 1.07 at 32k).
func (s *Planner) frontRewrites() bool {
	return s.cache.model.Class == CacheCheckpointed
}
