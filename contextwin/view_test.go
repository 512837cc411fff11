package contextwin

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// The view a caller reads is the planner's, and a caller's append to what
// it was handed changes neither it nor the next request. (A caller must
// not write the messages it is handed: the view lends them.)
func TestViewIsReadOnly(t *testing.T) {
	b := newBuild(Config{Window: 16000, PrefixChars: 2000})
	b.user("read the two files")
	b.call(Read, "a.go", body(900))
	b.call(Read, "b.go", body(700))
	p := b.s.Plan()
	v := b.s.View()
	if !reflect.DeepEqual(v.Messages(), p.Messages) || v.Len() != len(p.Messages) {
		t.Fatalf("View().Messages() = %d messages, Plan().Messages %d: want the same", v.Len(), len(p.Messages))
	}
	size := 0
	for _, m := range p.Messages {
		size += sizeOf(m)
	}
	if v.Size() != size || v.Fresh() != size {
		t.Errorf("View: Size %d, Fresh %d; want both %d (nothing was sent yet)", v.Size(), v.Fresh(), size)
	}
	want := slices.Clone(v.Messages())
	if again := append(b.s.Plan().Messages, Message{Role: User, Content: "appended by the caller"}); !reflect.DeepEqual(again[:len(want)], want) {
		t.Errorf("a caller's append changed what it was handed")
	}
	if again := b.s.Plan(); !reflect.DeepEqual(again.Messages, want) {
		t.Errorf("after the caller appended to what it was handed, the next plan = %d messages, want %d", len(again.Messages), len(want))
	}
	b.answer(p)
	if v.Fresh() != 0 || v.Size() != size {
		t.Errorf("after the engine answered: Size %d, Fresh %d; want %d, 0", v.Size(), v.Fresh(), size)
	}
}

// A request's messages, once planned, never change: the view lends its
// messages rather than copying them (so that a plan costs what changed),
// and a later shed, fold or cut copies before it writes where it lent.
// The planner's own record of the request it sent relies on it, and so
// does a caller that keeps a request.
func TestLentMessagesStayAsPlanned(t *testing.T) {
	for _, w := range []int{4096, 16000} {
		h := newHarness(t, Config{Window: w, PrefixChars: 3000})
		type kept struct {
			msgs []Message
			as   string
		}
		var all []kept
		events := 0
		for n, st := range session(w, 80, 11) {
			h.play(n, st)
			h.noteFor = st.note
			p := h.s.Plan()
			if p.Event == Note {
				all = append(all, kept{p.Messages, fmt.Sprintf("%+v", p.Messages)})
				h.answer(p, 200)
				h.s.SetNote(st.note)
				p = h.s.Plan()
			}
			if p.TooSmall {
				break
			}
			if p.Event != Append {
				events++
			}
			all = append(all, kept{p.Messages, fmt.Sprintf("%+v", p.Messages)})
			h.answer(p, 150)
		}
		if events < 3 {
			t.Fatalf("W%d: %d shrink events in %d requests: the test shows nothing", w, events, len(all))
		}
		for i, k := range all {
			if got := fmt.Sprintf("%+v", k.msgs); got != k.as {
				t.Fatalf("W%d: request %d of %d changed after it was planned", w, i+1, len(all))
			}
		}
	}
}
