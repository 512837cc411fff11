package contextwin

import (
	"fmt"
	"testing"
)

// TestCacheLost: after the engine lost its cache, the planner expects
// nothing reused, and the request that then restarts at 0 does not teach
// it a checkpointed cache (a dense engine restarting at 0 before the
// change looks like one that restarted at a checkpoint at 0).
func TestCacheLost(t *testing.T) {
	b := newBuild(Config{Window: 32000, PrefixChars: 2000})
	b.user("Find where the cache is invalidated.")
	b.send()
	for r := 0; r < 3; r++ {
		b.call(Read, fmt.Sprintf("f%d.go", r), body(2000))
		b.send()
	}
	for i := 0; i < 2; i++ {
		b.s.CacheLost()
		if c := b.s.commonTokens(nil); c != 0 {
			t.Fatalf("after CacheLost the planner thinks the engine holds %d tokens, want 0", c)
		}
		b.call(Read, fmt.Sprintf("g%d.go", i), body(2000))
		p := b.s.Plan()
		b.s.Observe(Usage{PromptTokens: p.Estimate, Cached: 0, CachedKnown: true})
	}
	if c := b.s.cache.model.Class; c == CacheCheckpointed {
		t.Errorf("after two requests that restarted at 0 on a lost cache the class is %s, want it unlearnt", c)
	}
}
