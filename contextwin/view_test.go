package contextwin

import (
	"reflect"
	"testing"
)

// The view a caller reads is the planner's, and nothing the caller does
// with what it was handed changes the next request.
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
	want := v.Messages()
	p.Messages[0].Content = "changed by the caller"
	got := v.Messages()
	got[1].Content = "changed again"
	if again := b.s.Plan(); !reflect.DeepEqual(again.Messages, want) {
		t.Errorf("after the caller wrote to what it was handed, the next plan's first message = %q, want %q", again.Messages[0].Content, want[0].Content)
	}
	b.answer(p)
	if v.Fresh() != 0 || v.Size() != size {
		t.Errorf("after the engine answered: Size %d, Fresh %d; want %d, 0", v.Size(), v.Fresh(), size)
	}
}
