package lsp

import (
	"slices"
	"testing"

	"github.com/reika-lsp/reika/agent/tools"
)

// wroteOn is the record of a change of before into after, as applied.
func wroteOn(t *testing.T, before, after string) wroteEdit {
	t.Helper()
	p := tools.Proposal{Path: "a.go", Abs: "/ws/a.go", Old: before, New: after, Version: 1, Hunks: tools.LineHunks(before, after)}
	plan, err := PlanEdit(p, Current{Text: before, Version: 1, Open: true, Exists: true})
	if err != nil {
		t.Fatal(err)
	}
	w := wroteEdit{path: p.Path, abs: p.Abs, land: expectLanding(plan)}
	for _, h := range plan.Hunks {
		w.olds = append(w.olds, before[h.OldStart:h.OldEnd])
	}
	return w
}

func TestRevert(t *testing.T) {
	const v0 = "a\nb\nc\nd\ne\n"
	const v1 = "a\nB\nc\nd\nE\n"  // the run's first edit
	const v2 = "a\nB\nc\nD!\nE\n" // its second
	tests := []struct {
		name, now, want string
		kept            []string
	}{
		{"untouched since", v2, v0, nil},
		{"lines added above", "x\ny\n" + v2, "x\ny\n" + v0, nil},
		{"a line between changed", "a\nB\nC\nD!\nE\n", "a\nb\nC\nd\ne\n", nil},
		{"a hunk changed since", "a\nB\nc\nD?\nE\n", "a\nb\nc\nD?\ne\n", []string{"a.go line 4"}},
	}
	edits := []wroteEdit{wroteOn(t, v0, v1), wroteOn(t, v1, v2)}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, kept := revert(tt.now, edits)
			if got != tt.want || !slices.Equal(kept, tt.kept) {
				t.Errorf("revert(%q) = %q, kept %q; want %q, kept %q", tt.now, got, kept, tt.want, tt.kept)
			}
		})
	}
}
