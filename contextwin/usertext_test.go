package contextwin

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// pasteChat is a chat of turns user messages, each pasting 1.5–4 KB of CI
// output or a stack trace with a fact in it, each followed by a few rounds
// of reads, a command and an edit.
func pasteChat(turns, seed int) (steps []step, facts []string) {
	rng := rand.New(rand.NewPCG(uint64(seed), 31))
	for t := range turns {
		var b strings.Builder
		fmt.Fprintf(&b, "Turn %d: CI failed again, here is the output:\n", t)
		size := 1500 + rng.IntN(2500)
		fact := fmt.Sprintf("FACT build_%d: exit %d", t, 100+t)
		at := rng.IntN(20)
		for i := 0; b.Len() < size; i++ {
			if i == at {
				b.WriteString(fact + "\n")
				continue
			}
			fmt.Fprintf(&b, "    at pkg/svc/handler%d.go:%d +0x%x (goroutine %d, running)\n", i, 40+i*3, 0x1a0+i, t)
		}
		b.WriteString("--- FAIL: TestHandler (0.02s)\nWhat is wrong?")
		facts = append(facts, fact)
		steps = append(steps, step{user: b.String()})
		for r := range 3 + rng.IntN(3) {
			rs := []result{{kind: Read, path: fmt.Sprintf("pkg/svc/handler%d.go", rng.IntN(12)), chars: 600 + rng.IntN(3000)}}
			switch r % 3 {
			case 1:
				rs = append(rs, result{kind: Command, path: fmt.Sprintf("go test ./pkg/svc -run TestCase%d", rng.IntN(50)), chars: 800 + rng.IntN(4000)})
			case 2:
				rs = append(rs, result{kind: Diff, path: fmt.Sprintf("pkg/svc/handler%d.go", t%12), chars: 400 + rng.IntN(800)})
			}
			steps = append(steps, step{results: rs, note: "status: working\nbuild: red"})
		}
	}
	return steps, facts
}

// A user who pastes a long log at every turn never stops the session.
func TestPasteChatNeverStalls(t *testing.T) {
	skipRacePass(t)
	for _, c := range []CacheClass{CacheDense, CacheCheckpointed, CacheBlocks} {
		for _, w := range []int{12288, 16384} {
			t.Run(fmt.Sprint(c, w), func(t *testing.T) { pasteChatHolds(t, c, w) })
		}
	}
}

// pasteChatHolds plays the paste chat at window w on an engine of cache
// class c: it never stops, folds, and its last request carries every
// pasted fact.
func pasteChatHolds(t *testing.T, c CacheClass, w int) {
	steps, facts := pasteChat(24, 1)
	h := newHarness(t, Config{Window: w, PrefixChars: 4000, Reserve: 1024, Cache: CacheModel{Class: c}})
	h.run(steps)
	if h.ended != "" {
		t.Fatalf("after %d requests the run ended: %s", h.sent, h.ended)
	}
	folds, front := 0, 0
	for _, p := range h.plans {
		if p.Event == Fold {
			folds++
		}
		for _, m := range p.Messages {
			if strings.HasPrefix(m.Content, foldPreamble) {
				front = max(front, len(m.Content))
			}
		}
	}
	if folds < 5 {
		t.Errorf("%d folds: the chat tested little", folds)
	}
	for _, f := range facts {
		if !containsContent(h.prev, f) {
			t.Errorf("the last request lost the pasted fact %q", f)
		}
	}
	t.Logf("%d requests, %d folds, the largest recap %d bytes", h.sent, folds, front)
}

// carriesUser reports whether msgs carry user message i in a form at least
// as full as the one the recap gives it now: an appended recap keeps the
// fuller form it was sent with until a rewrite.
func carriesUser(msgs []Message, s *Planner, i int) bool {
	m := s.log[i]
	now := s.carriedUser(i)
	forms := []string{m.Content, s.sentContent(i), cutUserText(m, s.userRoom()), cutUserText(m, s.taskRoom()), shortUserText(m, nil), now}
	for _, f := range forms {
		if containsContent(msgs, f) {
			return true
		}
	}
	return false
}

// A message of the user's too long for the window is cut, its head and
// tail kept, not refused: only the fixed prefix can make the window too
// small.
func TestHugeUserMessageIsCut(t *testing.T) {
	var b strings.Builder
	b.WriteString("Why does this fail?\n")
	for i := 0; b.Len() < 120_000; i++ {
		fmt.Fprintf(&b, "    at pkg/svc/handler%d.go:%d +0x%x\n", i, 40+i, i)
	}
	b.WriteString("FAIL ok\nwhat now?")
	huge := b.String()
	for _, first := range []bool{true, false} {
		t.Run(fmt.Sprint("first ", first), func(t *testing.T) {
			steps := session(16384, 12, 3)
			if first {
				steps[0].user = huge
			} else {
				steps = append(steps[:6:6], append([]step{{user: huge}}, steps[6:]...)...)
			}
			h := newHarness(t, Config{Window: 16384, PrefixChars: 4000, Reserve: 1024})
			h.run(steps)
			if h.ended != "" {
				t.Fatalf("after %d requests the run ended: %s", h.sent, h.ended)
			}
			if !containsContent(h.prev, "Why does this fail?") {
				t.Error("the last request lost the head of the long message")
			}
		})
	}
}

// Both shortened forms of a message say where its whole text is and keep
// its exact facts; the cut one keeps its failure lines too.
func TestUserTextForms(t *testing.T) {
	steps, _ := pasteChat(1, 5)
	m := Message{Role: User, Content: steps[0].user, Payload: Payload{Spill: "/tmp/spill/user-message-1.txt"}}
	for name, got := range map[string]string{
		"cut":   cutUserText(m, 800),
		"short": shortUserText(m, nil),
	} {
		if !strings.Contains(got, m.Payload.Spill) {
			t.Errorf("the %s form does not say where the whole text is:\n%s", name, got)
		}
		if !strings.Contains(got, "FACT build_0: exit 100") {
			t.Errorf("the %s form lost the fact:\n%s", name, got)
		}
		if name == "cut" && !strings.Contains(got, "--- FAIL: TestHandler") {
			t.Errorf("the %s form lost the failure line:\n%s", name, got)
		}
		if len(got) >= len(m.Content) {
			t.Errorf("the %s form is %d bytes of %d", name, len(got), len(m.Content))
		}
	}
	if r := BuildRecap(RecapInput{Budget: 2000, Folded: []Message{m}}); !strings.Contains(r.Text, "(whole in "+m.Payload.Spill+")") {
		t.Errorf("the recap's entry for the message does not say where its whole text is:\n%s", r.Text)
	}
	if got := shortUserText(m, nil); strings.Contains(got, "\n") || strings.Contains(got, "goroutine") {
		t.Errorf("shortUserText = %q, want one line, without the lines between", got)
	}
}

// The task is the last of the user's words cut: a 3.5 KB task document
// stays whole in every request of a chat whose later pastes the recap
// shortens.
func TestTaskCutLast(t *testing.T) {
	skipRacePass(t)
	var b strings.Builder
	b.WriteString("Make the service pass CI. The requirements:\n")
	for i := 1; b.Len() < 3500; i++ {
		fmt.Fprintf(&b, "Requirement %d: handler %d returns 4xx on a bad request, never 5xx.\n", i, i)
	}
	task := b.String()
	for _, w := range []int{12288, 16384} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			steps, _ := pasteChat(24, 3)
			steps = append([]step{{user: task}}, steps...)
			h := newHarness(t, Config{Window: w, PrefixChars: 4000, Reserve: 1024})
			shortened := 0
			for n, st := range steps {
				h.play(n, st)
				h.noteFor = st.note
				if !h.request() {
					t.Fatalf("the run ended: %s", h.ended)
				}
				if !containsContent(h.prev, task) {
					t.Fatalf("request %d does not carry the task whole", h.sent)
				}
				if containsContent(h.prev, shortHeading) {
					shortened++
				}
			}
			if shortened == 0 {
				t.Error("no later message was shortened: the test tested little")
			}
		})
	}
}

// TestNoteLeavesTheNewAskOut: a note round that comes with a new ask of
// the user's is the last request sent and the question. The ask, a pasted
// log, goes to the engine once, after the fold's recap, and not in the
// note round too.
func TestNoteLeavesTheNewAskOut(t *testing.T) {
	steps, _ := pasteChat(24, 1)
	h := newHarness(t, Config{Window: 16384, PrefixChars: 4000, Reserve: 1024})
	seen := 0
	for n, st := range steps {
		h.play(n, st)
		h.noteFor = st.note
		prev, from := h.prev, len(h.plans)
		if !h.request() {
			t.Fatalf("after %d requests the run ended: %s", h.sent, h.ended)
		}
		if st.user == "" || h.plans[from].Event != Note {
			continue
		}
		seen++
		note, after := h.plans[from].Messages, h.plans[from+1].Messages
		if len(note) != len(prev)+1 || !slices.EqualFunc(note[:len(prev)], prev, sameMessage) {
			t.Errorf("step %d: the note round is not the last request (%d messages) and the question (%d messages)", n, len(prev), len(note))
		}
		ask := headUpTo(st.user, 80)
		if containsContent(note, ask) {
			t.Errorf("step %d: the note round carried the new ask", n)
		}
		if !containsContent(after, ask) {
			t.Errorf("step %d: the request after the note does not carry the new ask", n)
		}
	}
	if seen == 0 {
		t.Fatal("no note round came with a new ask: the chat tested nothing")
	}
}

// TestUserFormsOnlyShrink: a message of the user's changes form in the
// recap at most twice, whole to one line to its facts, and never back, so
// a rewritten recap changes the user's words only from the oldest message
// that changed.
func TestUserFormsOnlyShrink(t *testing.T) {
	const turns = 24
	steps, facts := pasteChat(turns, 1)
	h := newHarness(t, Config{Window: 16384, PrefixChars: 4000, Reserve: 1024})
	rank := map[int]int{}
	changed := 0
	for n, st := range steps {
		h.play(n, st)
		h.noteFor = st.note
		if !h.request() {
			t.Fatalf("after %d requests the run ended: %s", h.sent, h.ended)
		}
		u := h.s.indexUsers()
		for _, i := range u.at[1:] {
			m, f := h.s.log[i], h.s.carriedUser(i)
			r := 0
			switch f {
			case shortUserText(m, nil):
				r = 1
			case factsUserText(m, nil):
				r = 2
			}
			if old, ok := rank[i]; ok && r != old {
				changed++
				if r < old {
					t.Errorf("step %d: the user's message %d went back from form %d to %d", n, i, old, r)
				}
			}
			rank[i] = r
		}
	}
	if changed < turns/2 {
		t.Errorf("%d changes of form in %d messages: the chat tested little", changed, turns)
	}
	for _, fact := range facts {
		if !containsContent(h.prev, fact) {
			t.Errorf("the last request lost the pasted fact %q", fact)
		}
	}
}

// TestLongPasteChatOnADenseTokenizer: 30 asks, each a pasted log, on an
// engine whose tokenizer spends a token per byte (the tiny models of the
// CI's llama-server), never stop the session: the user's older messages
// shrink to their facts. (Past about 35 such asks a 16k window no longer
// holds the task, the facts and a new ask: the user's facts are not cut.)
func TestLongPasteChatOnADenseTokenizer(t *testing.T) {
	skipRacePass(t)
	steps, facts := pasteChat(30, 1)
	h := newHarness(t, Config{Window: 16384, PrefixChars: 4000, Reserve: 1024})
	h.count = func(chars int) int { return chars }
	h.run(steps)
	if h.ended != "" {
		t.Fatalf("after %d requests the run ended: %s", h.sent, h.ended)
	}
	lost := 0
	for _, f := range facts {
		if !containsContent(h.prev, f) {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("the last request lost %d of %d pasted facts", lost, len(facts))
	}
}

// TestPastedLogFactsAfterRepeatedLines: a pasted test log repeats its
// "key: value" lines at every failure; kept once each, with a YAML block's
// opener ("stack: |-") left out, they leave the room of the short forms
// to the fact stated after them, and a later message that states a line
// again word for word does not keep it twice.
func TestPastedLogFactsAfterRepeatedLines(t *testing.T) {
	var b strings.Builder
	b.WriteString("CI failed again on my branch, here is the output:\n```\n")
	for i := range 12 {
		fmt.Fprintf(&b, "not ok %d - test/index.js > match\n  ---\n  failureType: 'testCodeFailure'\n  code: 'ERR_ASSERTION'\n  stack: |-\n    at match (index.js:%d:3)\n  ...\n", i+1, 10+i)
	}
	b.WriteString("port: listens on 127.0.0.1:31022\n```\nWhat is going on?")
	m := Message{Role: User, Content: b.String()}
	for name, form := range map[string]string{"short": shortUserText(m, nil), "facts": factsUserText(m, nil)} {
		if !strings.Contains(form, "port: listens on 127.0.0.1:31022") {
			t.Errorf("the %s form lost the fact after the failures: %q", name, form)
		}
		if n := strings.Count(form, "code: 'ERR_ASSERTION'"); n != 1 {
			t.Errorf("the %s form keeps %q %d times, want once: %q", name, "code: 'ERR_ASSERTION'", n, form)
		}
		if strings.Contains(form, "stack: |-") {
			t.Errorf("the %s form keeps a YAML block's opener as a fact: %q", name, form)
		}
	}
	stated := map[string]bool{"code: 'ERR_ASSERTION'": true}
	if got := factsUserText(m, stated); strings.Contains(got, "ERR_ASSERTION") || !strings.Contains(got, "failureType: 'testCodeFailure'") {
		t.Errorf("with the code stated before, the facts form is %q: want the failure type, not the code again", got)
	}
}

// A fold that takes in a paste appends it to the front recap, even where
// the user's words it carries are past userCap, while their present forms
// would not take userShare less: a rewrite then prefills everything from
// the oldest message that changed form to save a few hundred bytes. The
// pasted facts all stay.
func TestPasteAppendedWhileItsFormsWouldSaveLittle(t *testing.T) {
	steps, facts := pasteChat(40, 3)
	h := newHarness(t, Config{Window: 16384, PrefixChars: 4000, Reserve: 1024, Cache: CacheModel{Class: CacheDense}})
	s := h.s
	appendedPast := 0
	for n, st := range steps {
		h.play(n, st)
		h.noteFor = st.note
		before, full := s.users.front, s.users.front > s.userCap()
		folds := s.fold.folds
		if !h.request() {
			t.Fatalf("after %d requests the run ended: %s", h.sent, h.ended)
		}
		if s.fold.folds == folds || !s.fold.frontMoved {
			continue
		}
		if full && !s.fold.rewrote && s.users.front > before {
			appendedPast++
		}
		if s.users.front > max(s.userCap(), s.formsLen(0, s.fold.upTo)+s.userShare())+s.userRoom()+len(userHeading)+2 {
			t.Errorf("step %d: the front recap carries %d bytes of the user's words, their forms %d: more than userShare and a message past them", n, s.users.front, s.formsLen(0, s.fold.upTo))
		}
	}
	if appendedPast == 0 {
		t.Errorf("no fold appended a paste to a recap whose user's words were past userCap (%d)", s.userCap())
	}
	for _, f := range facts {
		if !containsContent(h.prev, f) {
			t.Errorf("the last request lost the pasted fact %q", f)
		}
	}
	t.Logf("%d folds appended a paste past userCap", appendedPast)
}
