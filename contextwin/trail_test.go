package contextwin

import (
	"fmt"
	"strings"
	"testing"
)

// Every request names every file the session changed, whatever the folds
// made of the turns that changed them: at 12k the recap is rewritten
// again and again in little room.
func TestTrailInEveryRequest(t *testing.T) {
	skipRacePass(t)
	for _, w := range []int{12288, 16384} {
		for _, c := range []CacheClass{CacheDense, CacheCheckpointed} {
			t.Run(fmt.Sprint(c, w), func(t *testing.T) {
				steps, _ := pasteChat(24, 2)
				h := newHarness(t, Config{Window: w, PrefixChars: 4000, Reserve: 1024, Cache: CacheModel{Class: c}})
				named := map[string]bool{}
				folds := 0
				for n, st := range steps {
					h.play(n, st)
					h.noteFor = st.note
					if !h.request() {
						t.Fatalf("the run ended: %s", h.ended)
					}
					for _, r := range st.results {
						if r.kind == Diff {
							named[r.path] = true
						}
					}
					if p := h.plans[len(h.plans)-1]; p.Event == Fold {
						folds++
					}
					for path := range named {
						if !namesIn(h.prev, path) {
							t.Fatalf("request %d names the changed file %q nowhere", h.sent, path)
						}
					}
				}
				if folds < 5 || len(named) < 10 {
					t.Errorf("%d folds, %d files changed: the test tested little", folds, len(named))
				}
			})
		}
	}
}

// An edit's hunks say which lines it changed; the trail names them, and
// the commands run, where no entry of what happened names them.
func TestTrailNamesChangedLines(t *testing.T) {
	diff := "--- a/a.go\n+++ b/a.go\n@@ -10,3 +12,5 @@ func f()\n-x\n+y\n@@ -40,0 +44,0 @@\ndiff --git a/b.go b/b.go\n--- a/b.go\n+++ b/b.go\n@@ -1 +1 @@\n"
	edit := Message{Role: Assistant, ToolCalls: []ToolCall{{ID: "1", Name: "edit", Arguments: `{}`}, {ID: "2", Name: "bash", Arguments: `{"command":"go test ./..."}`}}}
	folded := BuildRecap(RecapInput{Budget: 2000, Folded: []Message{
		edit,
		{Role: Tool, ToolCallID: "1", Content: diff, Payload: Payload{Kind: Diff}},
		{Role: Tool, ToolCallID: "2", Content: "ok", Payload: Payload{Kind: Command, Path: "go test ./..."}},
	}})
	// The next rewrite, with no room for what happened.
	folded.Happened = nil
	r := BuildRecap(RecapInput{Budget: 2000, Previous: &folded})
	for _, want := range []string{changedHead + "\n- a.go: 12-16, 44\n- b.go: 1\n", commandsHead + "\n- go test ./..."} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("the recap does not hold %q:\n%s", want, r.Text)
		}
	}
}

// namesIn reports whether msgs hold s in a content or a call's arguments.
func namesIn(msgs []Message, s string) bool {
	for _, m := range msgs {
		if strings.Contains(m.Content, s) {
			return true
		}
		for _, c := range m.ToolCalls {
			if strings.Contains(c.Arguments, s) {
				return true
			}
		}
	}
	return false
}

// A part appended to a middle recap names the files its turns changed on
// its line after the header, even where a long note and many entries
// leave its entries no room to say so: a session whose middle recap is
// never rewritten (a large window) still names them.
func TestPartNamesFilesChanged(t *testing.T) {
	diff := "--- a/a.go\n+++ b/a.go\n@@ -10,3 +12,5 @@ func f()\n-x\n+y\n"
	var folded []Message
	folded = append(folded,
		Message{Role: Assistant, ToolCalls: []ToolCall{{ID: "1", Name: "edit", Arguments: `{}`}}},
		Message{Role: Tool, ToolCallID: "1", Content: diff, Payload: Payload{Kind: Diff}})
	for i := range 30 { // newer entries that crowd the edit out of what happened
		id := fmt.Sprint("r", i)
		folded = append(folded,
			Message{Role: Assistant, Content: "Looking further.", ToolCalls: []ToolCall{{ID: id, Name: "read", Arguments: `{}`}}},
			Message{Role: Tool, ToolCallID: id, Content: text(300, i), Payload: Payload{Kind: Read, Path: fmt.Sprintf("pkg/file%d.go", i)}})
	}
	note := strings.Repeat("The parser keeps its state between calls. ", 20)
	part := BuildRecap(RecapInput{Note: note, Folded: folded, Budget: 900, Part: true})
	if !strings.Contains(part.Text, changedNamesHead+" a.go") {
		t.Errorf("the part does not name a.go as changed:\n%s", part.Text)
	}
	if strings.Contains(part.Text, changedHead) {
		t.Errorf("the part lists the changed lines, which it leaves to the next rewrite:\n%s", part.Text)
	}
}

// A recap given the room neededRoom says, the note's least share in it,
// names every file changed beside its facts: before, that room left the
// note's share out, and the oldest file changed of a first fold's part
// did not fit (many-small at 32k, 25 of 27 named).
func TestNeededRoomHoldsTheNamesBesideTheNote(t *testing.T) {
	var prev Recap
	for i := range 9 {
		prev.Ledger = append(prev.Ledger, Fact{fmt.Sprintf("key%d", i), fmt.Sprintf("value number %d of the ledger", i)})
	}
	for i := range 12 {
		prev.Files = append(prev.Files, FileTouch{Path: fmt.Sprintf("agent/engine/sim/regress_%d_test.go", i*17), Edited: true})
	}
	note := strings.Repeat("The policy proposes an edit whose old text occurs twice. ", 12)
	prev.Note = note
	room := neededRoom(&prev, "")
	for _, part := range []bool{false, true} {
		r := BuildRecap(RecapInput{Note: note, Previous: &prev, Budget: room, Part: part})
		for _, f := range prev.Files {
			if !strings.Contains(r.Text, f.Path) {
				t.Errorf("part %v, in the %d bytes neededRoom gives: %s is not named:\n%s", part, room, f.Path, r.Text)
			}
		}
		for _, f := range prev.Ledger {
			if !strings.Contains(r.Text, f.Key+": "+f.Value) {
				t.Errorf("part %v: the fact %s is not stated", part, f.Key)
			}
		}
	}
}

// Every file the session changed is named in the last request, however
// many more it only read: a recap keeps the files changed past the
// maxFiles it keeps of those read, and names them before its note and
// what happened. (A recorded session of 27 files changed among many
// more read named 16 of them at 16k, and 13 at 32k.)
func TestEveryFileChangedNamedAmongManyRead(t *testing.T) {
	var facts strings.Builder
	for k := range 18 {
		fmt.Fprintf(&facts, "- fact_%02d: a value the task depends on, number %d\n", k, k*37)
	}
	// A note that states 18 facts besides crowds a 16k window's front
	// recap: at three quarters of its budget the oldest files changed went
	// unnamed.
	for _, note := range []string{"status: working", "status: working\n" + facts.String()} {
		for _, w := range []int{16384, 32768} {
			var steps []step
			steps = append(steps, step{user: "Fix the handlers, one file at a time."})
			for r := range 240 {
				rs := []result{{kind: Read, path: fmt.Sprintf("internal/read%03d.go", r), chars: 1500 + r%7*300}}
				if r%8 == 0 {
					rs = append(rs, result{kind: Diff, path: fmt.Sprintf("internal/handlers/generated/edit%02d_handler_test.go", r/8), chars: 400})
				}
				steps = append(steps, step{results: rs, note: note})
			}
			h := newHarness(t, Config{Window: w, PrefixChars: 4000, Reserve: 1024})
			var changed []string
			worst, at := 1.0, 0
			for n, st := range steps {
				h.play(n, st)
				h.noteFor = st.note
				if !h.request() {
					t.Fatalf("%d: the run ended: %s", w, h.ended)
				}
				named := 0
				for _, p := range changed {
					if namesIn(h.prev, p) {
						named++
					}
				}
				if len(changed) > 0 && float64(named)/float64(len(changed)) < worst {
					worst, at = float64(named)/float64(len(changed)), n
				}
				for _, r := range st.results {
					if r.kind == Diff {
						changed = append(changed, r.path)
					}
				}
			}
			if h.s.fold.folds < 3 {
				t.Fatalf("%d: %d folds: the session tested little", w, h.s.fold.folds)
			}
			if worst < 1 {
				t.Errorf("%d, %d bytes of note: the request of step %d names %.2f of the files changed before it, want every one", w, len(note), at, worst)
			}
		}
	}
}
