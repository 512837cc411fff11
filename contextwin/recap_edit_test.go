package contextwin

import (
	"fmt"
	"strings"
	"testing"
)

// compactNow folds the session the way reika.compact does: the note
// round, then the fold.
func compactNow(t *testing.T, b *build, note string) Plan {
	t.Helper()
	if err := b.s.Compact(); err != nil {
		t.Fatalf("Compact() = %v", err)
	}
	p := b.s.Plan()
	if p.Event == Note {
		b.answerAsEstimated(p)
		b.s.SetNote(note)
		p = b.s.Plan()
	}
	if p.Event != Fold || p.Folded == 0 {
		t.Fatalf("the compaction planned %s folding %d, want a fold", p.Event, p.Folded)
	}
	b.answer(p)
	return p
}

// The user's edit of the recap keeps the task the recap carried verbatim,
// and survives later folds: each new recap builds on the edited text.
func TestEditedRecapSurvivesFolds(t *testing.T) {
	const task = "Rename the field Foo.bar to Foo.baz in every package (TASK-4711)."
	const edit = "decision: keep the old JSON tag for Foo.baz"
	b := newBuild(Config{Window: 32000, PrefixChars: 2000})
	b.user(task)
	b.send()
	rounds := func(from int) {
		for r := from; r < from+30; r++ {
			b.call(Read, fmt.Sprintf("f%d.go", r), body(2000))
			b.send()
		}
	}
	rounds(0)
	compactNow(t, b, "state: a third done")
	if !b.s.EditRecap(b.s.Recap().Text + "\n" + edit) {
		t.Fatal("EditRecap() = false with a recap")
	}
	p := b.s.Plan()
	if first := p.Messages[0].Content; !strings.Contains(first, edit) || !strings.Contains(first, task) {
		t.Fatalf("after the edit the recap message = %q, want the edit and the task", headUpTo(first, 600))
	}
	b.answer(p)
	for fold := 1; fold <= 2; fold++ {
		rounds(fold * 30)
		p := compactNow(t, b, fmt.Sprintf("state: fold %d", fold))
		first := p.Messages[0].Content
		for _, want := range []string{edit, task, fmt.Sprintf("state: fold %d", fold)} {
			if !strings.Contains(first, want) {
				t.Errorf("fold %d after the edit: the recap message lacks %q:\n%s", fold, want, headUpTo(first, 1500))
			}
		}
		if r := b.s.Recap(); !strings.Contains(r.Text, edit) {
			t.Errorf("fold %d: Recap().Text lacks the edit", fold)
		}
	}
}

// A recap built on an edit stays within its budget, however long the edit.
func TestEarlierWithinBudget(t *testing.T) {
	prev := EditedRecap(recapHeader + "\n" + strings.Repeat("the user wrote this line\n", 200))
	for _, budget := range []int{0, 10, 80, 200, 1000, 8000} {
		r := BuildRecap(RecapInput{Previous: &prev, Note: "k: v", Budget: budget})
		if len(r.Text) > budget {
			t.Errorf("BuildRecap with budget %d: %d bytes", budget, len(r.Text))
		}
		if budget >= 8000 && !strings.Contains(r.Text, earlierHead) {
			t.Errorf("BuildRecap with budget %d left out the user's edit", budget)
		}
		if r.Earlier != prev.Earlier {
			t.Errorf("BuildRecap did not carry the edit on")
		}
	}
}
