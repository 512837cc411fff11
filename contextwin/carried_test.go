package contextwin

import (
	"fmt"
	"strings"
	"testing"
)

// A message that fits its room is carried whole; a longer one as its head
// and tail, with the exact facts of what lies between and a line that says
// how much was left out — within the room and a quarter more.
func TestCarriedText(t *testing.T) {
	if got := carriedText("short message\nFACT a: 1\n", 100); got != "short message\nFACT a: 1\n" {
		t.Errorf("a message that fits = %q, want it whole", got)
	}
	var b strings.Builder
	b.WriteString("Here is the log you asked about.\n")
	for i := range 400 {
		if i%50 == 25 {
			fmt.Fprintf(&b, "FACT pasted_%d: value %d\n", i, i)
			continue
		}
		fmt.Fprintf(&b, "line %d of the pasted output, nothing to keep here\n", i)
	}
	b.WriteString("What do you make of it?\n")
	long := b.String()
	const room = 4000
	got := carriedText(long, room)
	if len(got) > room*5/4+200 {
		t.Errorf("carried %d bytes of %d, want at most the room (%d) and a quarter", len(got), len(long), room)
	}
	if !strings.HasPrefix(got, "Here is the log you asked about.\n") || !strings.HasSuffix(got, "What do you make of it?\n") {
		t.Errorf("the cut message lost its head or its tail:\n%s", got)
	}
	if !strings.Contains(got, "bytes of this message left out to fit the recap") {
		t.Errorf("the cut is not said:\n%s", got)
	}
	for i := 25; i < 400; i += 50 {
		if f := fmt.Sprintf("FACT pasted_%d: value %d", i, i); !strings.Contains(got, f) {
			t.Errorf("the fact %q did not survive the cut", f)
		}
	}
	if again := carriedText(long, room); again != got {
		t.Error("the same message and room cut two ways")
	}
}

// A user who pastes a long text into the conversation: every fold's recap
// carries its head, its tail and its facts, not the whole of it, and the
// recap's opening is the same from one rewrite to the next.
func TestRecapCarriesALongUserMessageCut(t *testing.T) {
	var b strings.Builder
	for i := range 500 {
		if i%50 == 25 {
			fmt.Fprintf(&b, "FACT pasted_%d: value %d\n", i, i)
			continue
		}
		fmt.Fprintf(&b, "line %d of a long paste, of no lasting interest\n", i)
	}
	paste := b.String() // about 23 KB
	const w = 16384
	steps := session(w, 80, 7)
	steps = append(steps[:3:3], append([]step{{user: "Look at this output:\n" + paste}}, steps[3:]...)...)
	h := newHarness(t, Config{Window: w, PrefixChars: 4000, Reserve: 1024})
	h.run(steps)
	if h.ended != "" {
		t.Fatalf("the run ended: %s", h.ended)
	}
	var fronts []string
	for _, p := range h.plans {
		if p.Event == Fold {
			for _, m := range p.Messages {
				if m.Role == User && strings.HasPrefix(m.Content, foldPreamble) {
					fronts = append(fronts, m.Content)
					break
				}
			}
		}
	}
	last := h.prev
	var recap string
	for _, m := range last {
		if m.Role == User && strings.HasPrefix(m.Content, foldPreamble) {
			recap = m.Content
		}
	}
	if recap == "" {
		t.Fatal("the session never folded the paste into the recap")
	}
	carried := carriedText("Look at this output:\n"+paste, h.s.userRoom())
	for i, f := range fronts {
		if !strings.Contains(f, carried) {
			t.Errorf("rewrite %d of the recap does not carry the paste as the others do", i+1)
		}
	}
	if len(fronts) < 2 {
		t.Errorf("%d rewrites of the recap: the test tested little", len(fronts))
	}
	if len(recap) > len(paste)/2 {
		t.Errorf("the recap is %d bytes for a %d-byte paste: want it cut", len(recap), len(paste))
	}
	for i := 25; i < 500; i += 50 {
		if f := fmt.Sprintf("FACT pasted_%d: value %d", i, i); !strings.Contains(recap, f) {
			t.Errorf("the recap lost the paste's fact %q", f)
		}
	}
	if !strings.Contains(recap, "Look at this output:\nline 0 of a long paste") {
		t.Error("the recap lost the paste's head")
	}
}
