package replay

import (
	"context"
	"slices"
	"testing"
)

// An engine whose cache cannot roll back prefills more for the same
// session than a dense one: every change before the end of what it holds
// restarts at a checkpoint or at 0 (recurrent), or does so when it lies
// before the sliding window (swa). The planner prices events as dense
// for now, so the requests are the same and only the engine's figures
// differ. vLLM keeps whole blocks only, but of every recent sequence, so
// it may prefill more or less than one llama.cpp slot: its replay must
// only read the engine's cached_tokens. Dense is the zero Engine: its
// rows are Replay's, those of the README's table.
func TestEngineCachePrefill(t *testing.T) {
	if testing.Short() {
		t.Skip("ten replays: they run in the pass without the race detector (TestGrowthIsWhatAnInfiniteWindowPrefills races a replay)")
	}
	var s *Recording
	for _, ts := range testSessions(t) {
		if ts.Name != "fold-orphans" {
			continue
		}
		// The session's first 90 rounds, the last reply made a final
		// answer, where the run ends.
		short := *ts
		short.Rounds = slices.Clone(ts.Rounds[:min(len(ts.Rounds), 90)])
		last := &short.Rounds[len(short.Rounds)-1]
		last.Assistant.ToolCalls, last.Assistant.Content, last.Results = nil, "Done.", nil
		s = &short
	}
	if s == nil {
		t.Fatal("no session fold-orphans")
	}
	const window = 16000
	for _, name := range []string{"ours", "sliding"} {
		t.Run(name, func(t *testing.T) {
			base, err := Replay(context.Background(), s, window, name)
			if err != nil {
				t.Fatal(err)
			}
			if base.Row.Events == 0 || base.Row.Failed() {
				t.Fatalf("dense: %d events, failed %v: the session must change its requests to tell the engines apart", base.Row.Events, base.Row.Failed())
			}
			rows := map[string]Row{}
			for _, en := range []string{"dense", "swa", "recurrent", "vllm"} {
				e, err := ParseEngine(en)
				if err != nil {
					t.Fatal(err)
				}
				r, err := ReplayOn(context.Background(), e, s, window, name)
				if err != nil {
					t.Fatal(err)
				}
				// Ours plans by the engine's cache model, so its requests (and
				// the growth counted in them: a new result cut to the room a
				// request leaves counts as cut) differ a little by engine; a
				// peer's do not. On a checkpointed engine its folds keep the
				// older turns before a middle recap anchored at a checkpoint,
				// or rewrite the front recap at a middle recap's size, and
				// cut other results than on a dense one.
				slack := 0
				if name == "ours" {
					slack = base.Row.Growth * 5 / 100
				}
				if d := r.Row.Growth - base.Row.Growth; r.Row.Failed() || d > slack || -d > slack {
					t.Errorf("%s: failed %v, growth %d, want a full replay of the dense one's growth %d (±%d)", en, r.Row.Failed(), r.Row.Growth, base.Row.Growth, slack)
				}
				cached := 0
				for _, q := range r.Requests {
					cached += q.CacheN
				}
				if cached == 0 {
					t.Errorf("%s: no request reused the cache: the meter did not read the engine's figure", en)
				}
				rows[en] = r.Row
			}
			if rows["dense"] != base.Row {
				t.Errorf("--engine dense: %+v, want Replay's row %+v", rows["dense"], base.Row)
			}
			for _, en := range []string{"swa", "recurrent"} {
				if got, dense := rows[en].Prefilled, base.Row.Prefilled; got <= dense {
					t.Errorf("%s prefilled %d, want more than dense's %d", en, got, dense)
				}
			}
			t.Logf("prefilled: dense %d, swa %d, recurrent %d, vllm %d (growth %d)", base.Row.Prefilled,
				rows["swa"].Prefilled, rows["recurrent"].Prefilled, rows["vllm"].Prefilled, base.Row.Growth)
		})
	}
}
