package contextwin

import "testing"

// A boundary engine keeps a prompt's state only at its last block
// boundary: the mirror holds those boundaries, and a change, an append
// too, restarts at the newest at or before it.
func TestBoundaryRestart(t *testing.T) {
	m := CacheModel{Class: CacheBoundary}.withDefaults()
	if m.Block != DefaultBoundaryBlock {
		t.Fatalf("a boundary model's default block is %d, want %d", m.Block, DefaultBoundaryBlock)
	}
	var c engineCache
	c = m.processed(c, 0, 1500)    // boundary 1024
	c = m.processed(c, 1024, 3300) // boundary 3072
	for _, tc := range []struct{ common, want int }{
		{3300, 3072}, // an append: the last prompt's boundary, not its end
		{3100, 3072},
		{3000, 1024}, // before it: the boundary of the prompt before
		{1000, 0},
	} {
		if got := m.restart(c, tc.common); got != tc.want {
			t.Errorf("a change at %d restarts at %d, want %d (points %v)", tc.common, got, tc.want, ats(c))
		}
	}
	// A change at 2000 leaves the boundary at 3072 to the prompt it left.
	c = m.processed(c, 1024, 2500)
	if got := m.restart(c, 2500); got != 2048 {
		t.Errorf("after a change at 2000 and a prompt of 2500, an append restarts at %d, want 2048 (points %v)", got, ats(c))
	}
	if got := (CacheModel{Class: CacheBoundary, Block: 528}).String(); got != "last block boundary only (blocks of 528)" {
		t.Errorf("String() = %q", got)
	}
	if c, err := ParseCacheClass("Boundary"); err != nil || c != CacheBoundary {
		t.Errorf("ParseCacheClass(Boundary) = %q, %v", c, err)
	}
}

// The planner on vLLM serving a hybrid model prices every request where
// the engine restarts it: told the class and block, from the first; told
// vLLM's blocks of 16 (its discovery), or nothing, once the restarts of
// two appends short of their ends taught it the class and their common
// divisor the block. Priced as blocks or dense, every append is priced at
// its end, up to a block later than the engine restarts it.
func TestBoundaryEngineIsPricedAsOne(t *testing.T) {
	const block = 528
	steps := session(32768, 80, 3)
	base := Config{Window: 32768, PrefixChars: 4000, Reserve: 1024}
	for _, c := range []struct {
		name  string
		cache CacheModel
		late  int // requests the planner may misprice while it learns
	}{
		{"told boundary", CacheModel{Class: CacheBoundary, Block: block}, 0},
		{"told blocks of 16", CacheModel{Class: CacheBlocks}, 4},
		{"told nothing", CacheModel{}, 4},
		{"told boundary of 1024", CacheModel{Class: CacheBoundary}, 6},
	} {
		cfg := base
		cfg.Cache = c.cache
		s := NewPlanner(cfg)
		e := &checkpointEngine{boundary: block}
		requests, missed, firstOK := 0, 0, -1
		for n, st := range steps {
			(&harness{s: s}).play(n, st)
			p := planOn(s, e, cfg.PrefixChars)
			if p.TooSmall {
				t.Fatalf("%s: the run ended at step %d", c.name, n)
			}
			if len(p.Checkpoints) > 0 {
				t.Fatalf("%s: a plan asked for %d checkpoint requests, which a boundary engine does not keep", c.name, len(p.Checkpoints))
			}
			tc := &s.cache
			predicted := tc.model.restart(tc.engine, tc.common)
			tokens, from := e.send(cfg.PrefixChars, p.Messages)
			s.Observe(Usage{PromptTokens: tokens, CompletionTokens: 150, Cached: from, CachedKnown: true})
			requests++
			if tc.engine.n > 0 && predicted != from && requests > 1 {
				missed++
				if requests > c.late+1 {
					t.Errorf("%s: request %d (%d tokens) restarted at %d, priced at %d", c.name, requests, tokens, from, predicted)
				}
			} else if firstOK < 0 && requests > 1 {
				firstOK = requests
			}
		}
		m, why := s.CacheModel()
		t.Logf("%s: %d requests, %d priced elsewhere than the engine restarted; ended believing %s (%s)", c.name, requests, missed, m, why)
		if m.Class != CacheBoundary || m.Block != block {
			t.Errorf("%s: ended believing %s, want the last boundary of blocks of %d", c.name, m, block)
		}
	}
}

// An engine that keeps any prefix, told the boundary class, unteaches it
// at the first append it reuses whole.
func TestBoundaryToldWronglyIsUnlearnt(t *testing.T) {
	steps := session(32768, 20, 4)
	cfg := Config{Window: 32768, PrefixChars: 4000, Reserve: 1024, Cache: CacheModel{Class: CacheBoundary}}
	_, _, m := runOn(t, cfg, steps, true)
	if m.Class == CacheBoundary {
		t.Errorf("a dense engine left the planner believing %s", m)
	}
}
