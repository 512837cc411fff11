package contextwin

import (
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// What the recap carries of the user's messages. The task (the first
// message) is carried whole while it fits its room (taskRoom, a fifth of
// the window), and it is the last thing cut. A later message shrinks, and
// never grows back:
//
//   - whole (or its head, tail and facts past userRoom) while it and the
//     newer messages fit the share of the recap the user's words have
//     (userShare), and always when it is the newest;
//   - past that share, one line: its opening, its size and where its
//     whole text is, then its exact facts;
//   - past lineCount such lines, its exact facts alone, under one heading
//     for all of them; the oldest lines turn to facts by halves of
//     lineCount at once, so at one fold in lineCount/2 messages.
//
// A fold that rewrites the recap thus changes the user's words only from
// the oldest message that changed form: the engine keeps the ones before
// it cached. A ladder of four forms laid out anew every third message
// changed older messages at every layout, and every fold paid for all of
// them again: the generated pasted-log chats prefilled 1.15–1.17× their
// growth at 16k, and 1.12–1.15 with these forms (lines that also kept
// the log's failure lines, 200 bytes a message, cost 1.13–1.17). On a
// tokenizer of a token a byte, a 16k window holds some 30 asks of a
// pasted log: past that, the task, the facts and a new ask no longer fit
// beside a 4k prefix, since a fact the user stated is never dropped.

// userIndex lists the user's messages the recap carries, as the log grows.
type userIndex struct {
	room    int   // the userRoom whole was summed for
	scanned int   // log entries [0, scanned) are indexed
	at      []int // log index of each verbatim user message, in order
	whole   []int // whole[k] = Σ of messages [0, k) of min(length, room)
	// short and facts are each message's one line and its facts alone
	// (the forms past the share, which depend on nothing else); stating
	// is the first later message whose facts are not none, 0 for none.
	short, facts []string
	stating      int
	// stated are the fact lines the later messages scanned so far keep in
	// their short forms: a later message leaves out the ones an earlier
	// one stated word for word.
	stated map[string]bool
	// front is the bytes of later messages' text the front recap carries,
	// as sent: past userCap, a fold may rewrite it (userTextFull).
	front int
}

// The one-line form's bounds, in bytes.
const (
	shortOpening = 100 // its opening
	maxFactsKept = 480 // the exact facts it keeps
	lineCost     = 160 // a line's bytes beside its facts, about
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
		*u = userIndex{room: room, whole: []int{0}, front: u.front, stated: map[string]bool{}}
	}
	for ; u.scanned < len(s.log); u.scanned++ {
		if s.isVerbatimUser(u.scanned) {
			m := s.log[u.scanned]
			u.at = append(u.at, u.scanned)
			u.whole = append(u.whole, u.whole[len(u.whole)-1]+min(len(m.Content), u.room))
			u.short = append(u.short, shortUserText(m, u.stated))
			u.facts = append(u.facts, factsUserText(m, u.stated))
			if len(u.at) > 1 { // a later message, not the task
				for _, line := range strings.Split(u.facts[len(u.facts)-1], "\n") {
					u.stated[line] = true
				}
			}
			if k := len(u.at) - 1; k > 0 && u.stating == 0 && u.facts[k] != "" {
				u.stating = k
			}
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

// lineRoom is what the later messages' lines take, about: the share the whole ones have.
func (s *Planner) lineRoom() int { return s.userShare() }

// userCap is the later messages' text a recap appended to carries before
// a fold may rewrite it into their present forms (userTextFull).
func (s *Planner) userCap() int { return s.userShare() + s.userRoom() }

// carriedUser is user message i as the recap carries it (see the forms
// above); "" when the recap leaves it out.
func (s *Planner) carriedUser(i int) string {
	u := s.indexUsers()
	k := sort.SearchInts(u.at, i)
	if k >= len(u.at) || u.at[k] != i || k == 0 {
		return cutUserText(s.log[i], s.taskRoom())
	}
	switch s.laterForm(k) {
	case formWhole:
		return cutUserText(s.log[i], u.room)
	case formLine:
		return u.short[k]
	}
	return u.facts[k]
}

// The forms of a later message of the user's (see above).
const (
	formWhole = iota // whole, or cut to userRoom
	formLine         // one line
	formFacts        // its facts alone
)

// laterForm is the form of the k-th of the user's messages (k ≥ 1).
func (s *Planner) laterForm(k int) int {
	n := len(s.indexUsers().at)
	whole := s.wholeCount(n)
	switch {
	case n-1-k < whole:
		return formWhole
	case k > s.factsOnly(n-1-whole):
		return formLine
	}
	return formFacts
}

// factsOnly is how many of the later messages, oldest first, are carried
// as their facts alone when past of them are past the share the whole
// ones have: none while the lines fit lineCount, then the oldest by
// halves of it at once, so that a line becomes its facts at one fold in
// lineCount/2 messages, not at every one.
func (s *Planner) factsOnly(past int) int {
	k := s.lineCount()
	if past <= k {
		return 0
	}
	h := k / 2
	return (past - h) / h * h
}

// lineCount is how many of the later messages past the whole ones' share
// are carried in one line: as many as lineRoom bytes hold at lineCost
// each, four at least.
func (s *Planner) lineCount() int {
	return max(4, s.lineRoom()/lineCost&^1)
}

// factsUserText is what the recap keeps of an old message of the user's:
// the exact facts it states, "" when none, but those an earlier message
// stated word for word (in stated, nil for none).
func factsUserText(m Message, stated map[string]bool) string {
	lines := strings.Split(strings.TrimSpace(m.Content), "\n")
	return strings.TrimRight(statedFacts(lines, maxFactsKept, stated), "\n")
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

// shortUserText is m in one line: its opening, its size and where its
// whole text is, then its exact facts.
func shortUserText(m Message, stated map[string]bool) string {
	text := strings.TrimSpace(m.Content)
	lines := strings.Split(text, "\n")
	first := oneLine(lines[0], shortOpening)
	if len(lines) == 1 && len(text) <= shortOpening {
		return first
	}
	where := ""
	if m.Payload.Spill != "" {
		where = ", whole in " + m.Payload.Spill
	}
	out := first + " [… " + strconv.Itoa(len(text)) + " bytes" + where + "]"
	kept := statedFacts(lines[1:], maxFactsKept, stated)
	if kept = strings.ReplaceAll(strings.TrimRight(kept, "\n"), "\n", "; "); kept != "" {
		out += " facts: " + kept
	}
	return out
}

// statedFacts are the lines among lines that state an exact fact ("key:
// value"), one a line, within n bytes: not one whose value has no letter
// or digit (YAML's "stack: |-", which opens a block), nor one in stated
// or met before among lines. A pasted test log repeats such lines at
// every failure ("code: 'ERR_ASSERTION'"), and they took the bytes of the
// facts after them.
func statedFacts(lines []string, n int, stated map[string]bool) string {
	var b strings.Builder
	met := map[string]bool{}
	for _, line := range lines {
		line = strings.TrimSpace(line)
		f, ok := factOf(line)
		if !ok || stated[line] || met[line] || strings.IndexFunc(f.Value, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
			continue
		}
		met[line] = true
		if b.Len()+len(line)+1 <= n {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// carryUserText keeps count of the later messages' text the front recap
// carries after a fold up to boundary that appended to it or rewrote it.
func (s *Planner) carryUserText(appended bool, boundary int) {
	if !appended {
		s.users.front = s.formsLen(0, boundary)
		return
	}
	s.users.front += s.formsLen(s.fold.upTo, boundary)
}

// userTextFull reports whether the next fold that takes in one of the
// user's messages rewrites the front recap, each message in its present
// form: when the later messages' text it carries is past userCap and
// their present forms would take at least userShare less. A rewrite
// prefills again everything from the oldest message that changed form;
// on the first condition alone, a chat whose forms had grown past userCap
// (lines keep their facts) rewrote at every fold that took in a paste,
// to save a few hundred bytes (the pasted-log chats at 16k on dense:
// 1.10–1.17, against 1.10–1.15 with both).
func (s *Planner) userTextFull() bool {
	return s.users.front > max(s.userCap(), s.formsLen(0, s.fold.upTo)+s.userShare())
}

// formsLen is the bytes the later messages of the user's (the task aside)
// in entries [from, to) take in their present forms (verbatimLen).
func (s *Planner) formsLen(from, to int) int {
	u := s.indexUsers()
	n := 0
	for k := sort.SearchInts(u.at, from); k < len(u.at) && u.at[k] < to; k++ {
		if k > 0 {
			n += s.verbatimLen(u.at[k])
		}
	}
	return n
}

// userBlock is user message i as the recap writes it, under its heading:
// the task's, or one that says whether it is whole; "" when left out.
func (s *Planner) userBlock(i int) string {
	c := s.carriedUser(i)
	u := s.indexUsers()
	k := sort.SearchInts(u.at, i)
	switch {
	case c == "":
		return ""
	case k == 0 && len(u.at) > 0 && u.at[0] == i:
		return taskHeading + c
	case c == s.log[i].Content:
		return userHeading + c
	case k < len(u.at) && u.at[k] == i && s.laterForm(k) == formFacts:
		// The facts of the oldest messages run under one heading, before
		// the first of them that states any.
		if k == u.stating {
			return factsHeading + c
		}
		return c
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
func ShouldSpillUser(chars int) bool { return chars > shortOpening }

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
