package lsp

import (
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/tools"
)

func TestUndoneSince(t *testing.T) {
	old := "package a\n\nfunc A() {}\n\nfunc B() {}\n"
	p := tools.Proposal{Path: "a.go", Abs: "/w/a.go", Old: old}
	plan := EditPlan{Proposal: p, Current: Current{Text: old, Open: true, Exists: true},
		Hunks: []HunkEdit{{OldStart: strings.Index(old, "func A"), OldEnd: strings.Index(old, "func A") + len("func A() {}\n"), Text: "func A() { work() }\n"}}}
	w := wroteEdit{path: "a.go", abs: "/w/a.go", land: expectLanding(plan), seen: true}
	for _, h := range plan.Hunks {
		w.olds = append(w.olds, old[h.OldStart:h.OldEnd])
		w.oldSpans = append(w.oldSpans, [2]int{h.OldStart, h.OldEnd})
	}
	want := w.land.want
	for _, tt := range []struct {
		name string
		now  string
		undo bool
	}{
		{"still there", want, false},
		{"undone", old, true},
		{"undone, and typing elsewhere", strings.Replace(old, "func B() {}", "func B() { x() }", 1), true},
		{"changed further", strings.Replace(want, "work()", "work(); more()", 1), false},
		{"undone and the line changed again", strings.Replace(old, "func A() {}", "func A() { other() }", 1), false},
	} {
		if got := undoneSince(w, tt.now); got != tt.undo {
			t.Errorf("%s: undoneSince = %v, want %v", tt.name, got, tt.undo)
		}
	}
	// An edit never seen landing (an editor that has not sent its text,
	// a closed file) is not undone by a text without it.
	w.seen = false
	if undoneSince(w, old) {
		t.Errorf("undoneSince(not seen landing) = true, want false")
	}
}
