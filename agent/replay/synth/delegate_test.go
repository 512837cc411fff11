package synth

import (
	"bytes"
	"context"
	"testing"

	"github.com/reika-lsp/reika/agent/replay"
)

// TestDelegationReplay replays a delegation pair through ours at 32k: the
// delegated session prefills less itself than the inline one in all and
// keeps every fact (the inline one's are logged: a fact in a read shed
// before a note saw it is lost); with two slots the session's cache survives every
// subagent (its next request reuses its whole previous prompt), with one
// it does not.
func TestDelegationReplay(t *testing.T) {
	src := testSource(t)
	delegated, inline, err := Delegation(src, 7)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := replay.WriteRecording(&buf, delegated); err != nil {
		t.Fatal(err)
	}
	back, err := replay.ReadRecording(&buf)
	if err != nil || len(back.Rounds) != len(delegated.Rounds) || !back.HasSubagents() {
		t.Fatalf("the delegated session does not come back from its wire form: %v", err)
	}
	const window = 32000
	ctx := context.Background()
	in, err := replay.ReplayOn(ctx, replay.Engine{}, inline, window, "ours")
	if err != nil {
		t.Fatal(err)
	}
	for _, slots := range []int{2, 1} {
		res, err := replay.ReplayOn(ctx, replay.Engine{Slots: slots}, delegated, window, "ours")
		if err != nil {
			t.Fatal(err)
		}
		r := res.Row
		own := r.Prefilled - r.SubPrefilled
		t.Logf("%d slots: inline prefilled %d (%d events); delegated: the session %d, its subagents %d (%d events), facts %.2f",
			slots, in.Row.Prefilled, in.Row.Events, own, r.SubPrefilled, r.Events, r.FactsKept)
		if r.Failed() || r.FactsKept < 1 {
			t.Errorf("%d slots: delegated stalled %d, facts %.2f: want every fact", slots, r.Stalled, r.FactsKept)
		}
		if r.SubPrefilled == 0 || own >= in.Row.Prefilled {
			t.Errorf("%d slots: the delegating session prefilled %d itself (subagents %d), the inline one %d: want less", slots, own, r.SubPrefilled, in.Row.Prefilled)
		}
		survived, after := 0, 0
		var prev replay.Request
		sub := false
		for _, q := range res.Requests {
			switch {
			case q.Sub:
				sub = true
			case !q.Side:
				if sub {
					after++
					if q.CacheN >= prev.PromptTokens {
						survived++
					}
				}
				prev, sub = q, false
			}
		}
		if after != DelegationExplorations {
			t.Errorf("%d slots: %d requests after a subagent, want %d", slots, after, DelegationExplorations)
		}
		if slots > 1 && survived != after {
			t.Errorf("two slots: the session's cache survived %d of %d subagents, want all", survived, after)
		}
		if slots == 1 && survived != 0 {
			t.Errorf("one slot: the session's cache survived %d of %d subagents that shared its slot", survived, after)
		}
	}
}
