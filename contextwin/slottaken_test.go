package contextwin

import (
	"fmt"
	"testing"
)

// TestSlotTaken: after another conversation used the engine's slot, a
// request past half the usable room folds at once (the note round first),
// and the fold is priced as changing the request after the fixed prefix;
// a small one goes on as an append.
func TestSlotTaken(t *testing.T) {
	grow := func(b *build, rounds int) {
		for r := 0; r < rounds; r++ {
			b.call(Read, fmt.Sprintf("f%d.go", r), body(2000))
			if p := b.send(); p.Event != Append {
				t.Fatalf("round %d: %s, want appends below the shed point", r, p.Event)
			}
		}
	}
	small := newBuild(Config{Window: 32000, PrefixChars: 2000})
	small.user("Find where the cache is invalidated.")
	small.send()
	grow(small, 3)
	if small.s.SlotTaken() {
		t.Errorf("SlotTaken() on a request of %d tokens = true, want no fold for it", small.s.likely())
	}
	if p := small.s.Plan(); p.Event != Append {
		t.Errorf("Plan() after SlotTaken on a small request = %s, want an append", p.Event)
	}

	big := newBuild(Config{Window: 32000, PrefixChars: 2000})
	big.user("Find where the cache is invalidated.")
	big.send()
	grow(big, 28)
	if u := big.s.Budget().Usable; big.s.likely() <= u/2 {
		t.Fatalf("the request holds %d of %d usable tokens: the test needs more than half", big.s.likely(), u)
	}
	if !big.s.SlotTaken() {
		t.Fatalf("SlotTaken() past half the usable room = false, want a fold now")
	}
	if c := big.s.commonTokens(nil); c > big.s.prefixCount() {
		t.Errorf("after SlotTaken the planner thinks the engine holds %d tokens, more than the prefix's %d", c, big.s.prefixCount())
	}
	p := big.s.Plan()
	if p.Event != Note {
		t.Fatalf("Plan() after SlotTaken = %s, want the note round", p.Event)
	}
	big.answerAsEstimated(p)
	big.s.SetNote("cache: invalidated in store.go")
	if p = big.s.Plan(); p.Event != Fold || p.Folded == 0 {
		t.Fatalf("Plan() after the note = %s folding %d, want a fold", p.Event, p.Folded)
	}
}

// TestModelChanged: after a switch to another model the planner thinks
// the engine holds nothing, not even the prefix, and a request past half
// the usable room folds at once while its whole prefill is paid anyway.
func TestModelChanged(t *testing.T) {
	b := newBuild(Config{Window: 32000, PrefixChars: 2000})
	b.user("Find where the cache is invalidated.")
	b.send()
	for r := 0; r < 28; r++ {
		b.call(Read, fmt.Sprintf("f%d.go", r), body(2000))
		b.send()
	}
	if !b.s.ModelChanged() {
		t.Fatalf("ModelChanged() past half the usable room = false, want a fold now")
	}
	if c := b.s.commonTokens(nil); c != 0 {
		t.Errorf("after ModelChanged the planner thinks the engine holds %d tokens, want none", c)
	}
	if p := b.s.Plan(); p.Event != Note {
		t.Fatalf("Plan() after ModelChanged = %s, want the note round", p.Event)
	}
}

// TestSetModel: a switch to a model with a smaller window and another
// cache plans in that window with that cache: a request that held a
// third of the old usable room holds more than half of the new one and
// folds at once, the fold made to fit the new window.
func TestSetModel(t *testing.T) {
	b := newBuild(Config{Window: 64000, PrefixChars: 2000})
	b.user("Find where the cache is invalidated.")
	b.send()
	for r := 0; r < 24; r++ {
		b.call(Read, fmt.Sprintf("f%d.go", r), body(2000))
		b.send()
	}
	if u := b.s.Budget().Usable; b.s.likely() > u/2 {
		t.Fatalf("the request holds %d of %d usable tokens: the test needs less than half", b.s.likely(), u)
	}
	b.s.SetModel(24000, 2048, CacheModel{Class: CacheCheckpointed, SWA: 1024})
	if w := b.s.Budget().Window; w != 24000 {
		t.Errorf("Budget().Window after SetModel = %d, want 24000", w)
	}
	if m, _ := b.s.CacheModel(); m.Class != CacheCheckpointed || m.SWA != 1024 {
		t.Errorf("CacheModel() after SetModel = %s, want the new model's", m)
	}
	if !b.s.ModelChanged() {
		t.Fatalf("ModelChanged() in the new, smaller window = false, want a fold now")
	}
	p := b.s.Plan()
	if p.Event != Note {
		t.Fatalf("Plan() after the switch = %s, want the note round", p.Event)
	}
	b.answerAsEstimated(p)
	b.s.SetNote("cache: invalidated in store.go")
	p = b.s.Plan()
	if p.Event != Fold || p.Estimate > b.s.Budget().ShedTarget {
		t.Errorf("Plan() after the note = %s of %d tokens, want a fold below the new shed target %d", p.Event, p.Estimate, b.s.Budget().ShedTarget)
	}
	if p.MaxTokens > 2048 {
		t.Errorf("max_tokens %d, over the new model's output limit 2048", p.MaxTokens)
	}

	// A model the engine gives no window for keeps the window planned in.
	b.s.SetModel(0, 0, CacheModel{})
	if w := b.s.Budget().Window; w != 24000 {
		t.Errorf("Budget().Window after a switch with no window = %d, want 24000 kept", w)
	}
}

// TestPrefixAtFold: the agent is asked for a new fixed prefix at a fold
// and at no other plan; one it gives is counted from that request on,
// with nothing of the request in the engine's cache.
func TestPrefixAtFold(t *testing.T) {
	asked := 0
	b := newBuild(Config{Window: 32000, PrefixChars: 2000, PrefixAtFold: func() (int, bool) { asked++; return 2600, true }})
	b.user("Find where the cache is invalidated.")
	b.send()
	for r := 0; r < 6; r++ {
		b.call(Read, fmt.Sprintf("f%d.go", r), body(2000))
		if p := b.send(); p.Event != Append {
			t.Fatalf("round %d: %s, want appends", r, p.Event)
		}
	}
	if err := b.s.Compact(); err != nil {
		t.Fatal(err)
	}
	p := b.s.Plan()
	if p.Event != Note || asked != 0 {
		t.Fatalf("Plan() after Compact = %s, the prefix asked for %d times; want the note round, not asked", p.Event, asked)
	}
	b.answerAsEstimated(p)
	b.s.SetNote("cache: invalidated in store.go")
	if p = b.s.Plan(); p.Event != Fold || asked != 1 {
		t.Fatalf("Plan() after the note = %s, the prefix asked for %d times; want the fold, asked once", p.Event, asked)
	}
	if b.s.cfg.PrefixChars != 2600 || b.s.prefix.sent || b.s.cache.common != 0 {
		t.Errorf("after the fold: prefix %d bytes, sent %v, %d tokens in common; want the new 2600 bytes, unsent, none in common",
			b.s.cfg.PrefixChars, b.s.prefix.sent, b.s.cache.common)
	}
	b.answer(p)
	b.call(Read, "g.go", body(200))
	if p = b.send(); p.Event != Append || asked != 1 {
		t.Errorf("the round after the fold: %s, asked %d times; want an append, not asked again", p.Event, asked)
	}
}
