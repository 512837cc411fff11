package contextwin

import (
	"sort"
	"strconv"
	"strings"
)

// What the recap carries of the user's messages. The task (the first
// message) is carried whole while it fits its room (taskRoom, a fifth of
// the window), and it is the last thing cut. A later message is carried in one of
// four forms, chosen by how much the user said after it, so that a
// message's form changes at most three times in a session and the recaps
// built on it stay the same between those changes:
//
//   - whole (or its head, tail and facts past userRoom) while it and the
//     newer messages fit the share of the recap the user's words have
//     (userShare), and always when it is the newest;
//   - compact: its opening, its facts and failure lines and its last
//     line, with a pointer to the full text, for the compactCount messages
//     past that share;
//   - a pointer line with its facts for the pointerCount messages past
//     those;
//   - its exact facts alone for the older ones (the recap's "Happened"
//     list names them and where their whole text is): a fact the user
//     stated is never dropped.
//
// The later messages thus take about twice the share, and their facts: a
// user who pastes a log at every turn costs the recap a bounded share,
// and never makes the window too small.
//
// "Newer" counts the messages up to the last layout (layUsers): the forms
// are laid out anew only every relayEvery messages, and a message newer
// than the layout is carried in the first form. Between layouts the
// user's words in a rewritten recap are thus those of the last one with
// the new messages after them: the engine keeps them cached, and a fold
// makes it prefill again only what follows them. Laid out at every
// message, the forms of three older ones changed at every turn of a chat
// with a pasted log at each, and every fold paid for all of them again.

// userIndex lists the user's messages the recap carries, as the log grows.
type userIndex struct {
	room    int   // the userRoom whole was summed for
	scanned int   // log entries [0, scanned) are indexed
	at      []int // log index of each verbatim user message, in order
	whole   []int // whole[k] = Σ of messages [0, k) of min(length, room)
	// front is the bytes of later messages' text the front recap carries,
	// as sent: past userCap, a fold rewrites it rather than append.
	front int
	forms map[int]userForm // by log index, the form last rendered
	laid  int              // len(at) when the forms were last laid out, 0 not yet
}

// userForm is a message's form in the recap and its text.
type userForm struct {
	form int // 0 whole or cut, 1 compact, 2 pointer, 3 facts
	text string
}

// Compact and pointer forms' bounds, in bytes.
const (
	compactRoom     = 480 // a compact message: opening, failure lines, last line
	compactFailures = 200 // of which its failure lines
	pointerRoom     = 160 // a pointer line, about
	maxFactsKept    = 480 // the exact facts a shortened message keeps
	// userRoomDiv: a later message's room is this share of the window's
	// bytes at the price of new text (1.3 KB at 32k where a token is 1.6
	// bytes or more, 800 bytes where it is one). Every fold carries the
	// messages in it again, so a user who pastes a 3 KB log at every ask
	// pays each log once more at the fold that takes it; at a tenth of
	// the window (the share before), the generated pasted-log chats
	// prefilled 1.15–1.17× their growth at 32k, at a fortieth 1.08–1.12,
	// their facts all kept.
	userRoomDiv = 40
	minUserRoom = 512
	// taskRoomDiv: the task's room, a fifth of the window's bytes: what
	// the user asked first is the last thing cut.
	taskRoomDiv = 5
)

// indexUsers brings the index up to the log and returns it.
func (s *Planner) indexUsers() *userIndex {
	u := &s.users
	if room := s.userRoom(); u.room != room || len(u.whole) == 0 {
		*u = userIndex{room: room, whole: []int{0}, front: u.front}
		u.forms = nil
	}
	for ; u.scanned < len(s.log); u.scanned++ {
		if s.isVerbatimUser(u.scanned) {
			u.at = append(u.at, u.scanned)
			u.whole = append(u.whole, u.whole[len(u.whole)-1]+min(len(s.log[u.scanned].Content), u.room))
		}
	}
	return u
}

// userRoom is the room, in bytes, one later message of the user's has in
// the recap, and what all of them carried whole share (userShare). It is
// the window's share at the price of new text, so that it does not move
// as the estimator learns the engine's count unless that is denser than
// 1.6 bytes a token.
func (s *Planner) userRoom() int {
	return max(minUserRoom, s.est.NewChars(s.cfg.Window)/userRoomDiv)
}

// taskRoom is the room of the task, the session's first message.
func (s *Planner) taskRoom() int {
	return max(2*minUserRoom, s.est.NewChars(s.cfg.Window)/taskRoomDiv)
}

func (s *Planner) userShare() int { return s.userRoom() * 5 / 4 }

// compactCount and pointerCount are how many messages past the share are
// carried compact, and then as a pointer line: together at most the
// share.
func (s *Planner) compactCount() int { return max(1, s.userRoom()/2/compactRoom) }
func (s *Planner) pointerCount() int { return max(2, s.userRoom()/2/pointerRoom) }

// userCap bounds the later messages' text a recap appended to may carry
// before a fold must rewrite it into their present forms.
func (s *Planner) userCap() int { return s.userShare() + s.userRoom() }

// carriedUser is user message i as the recap carries it (see the forms
// above); "" when the recap leaves it out.
func (s *Planner) carriedUser(i int) string {
	u := s.indexUsers()
	k := sort.SearchInts(u.at, i)
	if k >= len(u.at) || u.at[k] != i || k == 0 {
		return cutUserText(s.log[i], s.taskRoom())
	}
	form := 3
	n := u.laid
	if n == 0 {
		n = len(u.at)
	}
	switch newer, whole := n-1-k, s.wholeCount(n); {
	case newer < whole:
		form = 0
	case newer < whole+s.compactCount():
		form = 1
	case newer < whole+s.compactCount()+s.pointerCount():
		form = 2
	}
	if f, ok := u.forms[i]; ok && f.form == form {
		return f.text
	}
	m := s.log[i]
	text := [...]func(Message) string{func(m Message) string { return cutUserText(m, u.room) },
		compactUserText, pointerUserText, factsUserText}[form](m)
	if u.forms == nil {
		u.forms = make(map[int]userForm)
	}
	u.forms[i] = userForm{form, text}
	return text
}

// factsUserText is what the recap keeps of an old message of the user's:
// the exact facts it states, "" when none.
func factsUserText(m Message) string {
	var facts []string
	for line := range strings.Lines(m.Content) {
		if f, ok := factOf(strings.TrimSpace(line)); ok {
			facts = append(facts, f.Key+": "+f.Value)
		}
	}
	return strings.TrimRight(keyLinesOf(facts, maxFactsKept, false), "\n")
}

// wholeCount is how many of the first n messages, from the n-th back,
// are carried whole: the n-th always, and the others while they and the
// newer ones fit the share (whole is monotone).
func (s *Planner) wholeCount(n int) int {
	u := s.indexUsers()
	share := s.userShare()
	// The oldest j whose messages [j, n) fit the share.
	j := sort.Search(n, func(j int) bool { return u.whole[n]-u.whole[j] <= share })
	return max(n-max(j, 1), 1)
}

// relayEvery: the user's later messages in the recap are laid out anew
// once so many have come since the last layout.
const relayEvery = 3

// layUsers lays the forms of the user's messages out anew when relayEvery
// messages have come since the last layout, or none was made; the event
// about to be planned then carries every message in its present form.
func (s *Planner) layUsers() {
	u := s.indexUsers()
	if u.laid == 0 || len(u.at)-u.laid >= relayEvery {
		u.laid = len(u.at)
	}
}

// cutUserText is m whole when it fits room, else carriedText's head, tail
// and facts, and where the full text is.
func cutUserText(m Message, room int) string {
	t := carriedText(m.Content, room)
	if t != m.Content && m.Payload.Spill != "" {
		t = strings.TrimRight(t, "\n") + "\n" + spillPointer(m.Payload.Spill)
	}
	return t
}

func spillPointer(path string) string {
	return "[the whole message is in " + path + ": read it for what was left out]"
}

// compactUserText is m's opening line, its exact facts and failure lines,
// its last line, and where the full text is, within compactRoom and a
// pointer.
func compactUserText(m Message) string {
	text := strings.TrimSpace(m.Content)
	if len(text) <= compactRoom {
		return text
	}
	lines := strings.Split(text, "\n")
	first, last := oneLine(lines[0], 200), oneLine(lines[len(lines)-1], 160)
	var b strings.Builder
	b.WriteString(first)
	b.WriteString("\n[… " + strconv.Itoa(len(text)) + " bytes in all, cut to fit the recap; the exact facts and failures among them:]\n")
	b.WriteString(keyLinesOf(lines[1:len(lines)-1], maxFactsKept, false))
	b.WriteString(failureLines(lines[1:len(lines)-1], compactFailures))
	b.WriteString(last)
	if m.Payload.Spill != "" {
		b.WriteString("\n" + spillPointer(m.Payload.Spill))
	}
	return b.String()
}

// pointerUserText is one line for m: its opening, its size, where its
// full text is, and its exact facts.
func pointerUserText(m Message) string {
	text := strings.TrimSpace(m.Content)
	lines := strings.Split(text, "\n")
	first := oneLine(lines[0], 100)
	if len(lines) == 1 && len(text) <= 100 {
		return first
	}
	where := ""
	if m.Payload.Spill != "" {
		where = ", whole in " + m.Payload.Spill
	}
	facts := strings.ReplaceAll(strings.TrimRight(keyLinesOf(lines[1:], maxFactsKept, false), "\n"), "\n", "; ")
	out := first + " [… " + strconv.Itoa(len(text)) + " bytes" + where + "]"
	if facts != "" {
		out += " facts: " + facts
	}
	return out
}

// keyLinesOf are the lines among lines that state an exact fact ("key:
// value"), one a line, within n bytes; and failure lines (failureLine)
// that are not facts when failures is set, alone.
func keyLinesOf(lines []string, n int, failures bool) string {
	var b strings.Builder
	for _, line := range lines {
		line = strings.TrimSpace(line)
		if _, ok := factOf(line); ok == failures || failures && (len(line) > maxFact || !failureLine(line)) {
			continue
		}
		if b.Len()+len(line)+1 <= n {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// failureLines are the failure lines among lines that are not facts,
// within n bytes.
func failureLines(lines []string, n int) string { return keyLinesOf(lines, n, true) }

// carryUserText keeps count of the later messages' text the front recap
// carries after a fold up to boundary that appended to it or rewrote it.
func (s *Planner) carryUserText(appended bool, boundary int) {
	from := 0
	if appended {
		from = s.fold.upTo
	} else {
		s.users.front = 0
	}
	u := s.indexUsers()
	for _, i := range u.at[sort.SearchInts(u.at, from):] {
		if i >= boundary {
			break
		}
		if i != u.at[0] {
			s.users.front += s.verbatimLen(i)
		}
	}
}

// userTextFull reports whether the front recap carries more of the later
// messages' text than userCap: the next fold that takes in one of the
// user's messages rewrites it, each message in its present form.
func (s *Planner) userTextFull() bool { return s.users.front > s.userCap() }

// userBlock is user message i as the recap writes it, under its heading:
// the task's, or one that says whether it is whole; "" when left out.
func (s *Planner) userBlock(i int) string {
	c := s.carriedUser(i)
	switch u := s.indexUsers(); {
	case c == "":
		return ""
	case len(u.at) > 0 && u.at[0] == i:
		return taskHeading + c
	case c == s.log[i].Content:
		return userHeading + c
	}
	return shortHeading + c
}

// instructionShare is the share, in percent, of the room the fixed prefix
// leaves that the newest message of the user's may take whole.
const instructionShare = 50

// fitInstruction cuts the newest message of the user's, before any
// request carries it, to its share of the room the fixed prefix leaves
// when it is longer: its head and tail, the exact facts and failure lines
// between them, and where the full text is. What the user says thus never
// makes the window too small; the window holds it whole where it fits.
func (s *Planner) fitInstruction(b Budget) {
	t := s.turnStart()
	if t < 0 || t < s.sent || s.log[t].Continuation || s.entries[t].form == cutToFit {
		return
	}
	room := (b.Usable - s.prefixCount()) * instructionShare / 100
	if s.est.New(len(s.log[t].Content)) <= room {
		return
	}
	m := s.log[t]
	cut := cutWithFacts(m.Content, max(s.est.NewChars(room)*4/5, minCut), "to fit the context window")
	if m.Payload.Spill != "" {
		cut = strings.TrimRight(cut, "\n") + "\n" + spillPointer(m.Payload.Spill)
	}
	e := &s.entries[t]
	e.form, e.text = cutToFit, cut
	s.change(t, true)
}

// ShouldSpillUser reports whether a message of the user's this long should
// also be saved to a file the model can read back (the agent writes it and
// sets Payload.Spill): one the recap may carry shortened.
func ShouldSpillUser(chars int) bool { return chars > compactRoom }

// userEntry is a message of the user's as the recap's "Happened" list
// names it: its opening, and where its whole text is.
func userEntry(m Message) []string {
	where := ""
	if m.Payload.Spill != "" {
		where = " (whole in " + oneLine(m.Payload.Spill, maxEntry/2) + ")"
	}
	if s := oneLine(m.Content, maxEntry-len("user asked \"\"")-len(where)); s != "" {
		return []string{"user asked \"" + s + "\"" + where}
	}
	return nil
}
