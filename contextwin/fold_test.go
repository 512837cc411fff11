package contextwin

import (
	"fmt"
	"strings"
	"testing"
)

// TestNewBlocks: a part appended to the recap carries only the map's file
// blocks the recap does not hold word for word.
func TestNewBlocks(t *testing.T) {
	news := "a.go\n  func A\n  func B\nb.go\n  func C\nc.go\n"
	carried := "…learnt:\na.go\n  func A\n  func B\n\nFolded since:"
	if got, want := newBlocks(news, carried), "b.go\n  func C\nc.go"; got != want {
		t.Errorf("newBlocks = %q, want %q", got, want)
	}
	if got := newBlocks("a.go\n  func A", carried); got != "" {
		t.Errorf("newBlocks of what is carried = %q, want nothing", got)
	}
	// A block that changed is new, whole.
	if got, want := newBlocks("a.go\n  func A\n  func Z\n", carried), "a.go\n  func A\n  func Z"; got != want {
		t.Errorf("newBlocks = %q, want %q", got, want)
	}
}

// A fold of the front that takes a middle recap in and appends to the
// front recap keeps the middle recap's exact facts: the request carries
// every fact a note gave, fold after fold, though the model's later
// notes do not repeat the earlier ones.
func TestFoldsKeepEveryNotesFacts(t *testing.T) {
	skipRacePass(t)
	mids, takenIn := 0, 0
	for _, w := range []int{16384, 32768} {
		for seed := 1; seed <= 3; seed++ {
			cfg := Config{Window: w, PrefixChars: 4000, Reserve: 1024}
			s := NewPlanner(cfg)
			e := &checkpointEngine{dense: true}
			var facts []string
			for n, st := range session(w, 120, seed) {
				(&harness{s: s}).play(n, st)
				hadMid := s.fold.midTo > 0
				p := s.Plan()
				if p.Event == Note {
					pn, c := e.send(cfg.PrefixChars, p.Messages)
					s.Observe(Usage{PromptTokens: pn, CompletionTokens: 200, Cached: c, CachedKnown: true})
					f := fmt.Sprintf("fact_%d: value %d", n, n)
					s.SetNote("state: working\n" + f)
					p = s.Plan()
					if p.Event != Append {
						// (A note after which the count says no fold
						// is due after all is dropped unused.)
						facts = append(facts, f)
					}
				}
				if p.Event == Fold && s.fold.midTo > 0 {
					mids++
				}
				if p.Event == Fold && hadMid && s.fold.midTo == 0 && !s.fold.rewrote {
					takenIn++
				}
				var b strings.Builder
				for _, m := range p.Messages {
					b.WriteString(m.Content + "\n")
				}
				for _, f := range facts {
					if !strings.Contains(b.String(), f) {
						t.Fatalf("window %d seed %d step %d (%s): the request lost %q", w, seed, n, p.Event, f)
					}
				}
				pn, c := e.send(cfg.PrefixChars, p.Messages)
				s.Observe(Usage{PromptTokens: pn, CompletionTokens: 150, Cached: c, CachedKnown: true})
			}
		}
	}
	if takenIn == 0 {
		t.Fatalf("no fold of the front took a middle recap in and appended (%d folds into the middle): the test shows nothing", mids)
	}
}
