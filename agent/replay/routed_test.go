package replay

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/reika-lsp/reika/agent/sim"
)

// shortSessions are the recorded sessions cut to their first n rounds,
// the last reply made a final answer.
func shortSessions(t *testing.T, n int) []*Recording {
	var out []*Recording
	for _, ts := range testSessions(t) {
		short := *ts
		short.Rounds = slices.Clone(ts.Rounds[:min(len(ts.Rounds), n)])
		last := &short.Rounds[len(short.Rounds)-1]
		last.Assistant.ToolCalls, last.Assistant.Content, last.Results = nil, "Done.", nil
		out = append(out, &short)
	}
	return out
}

// TestRouting replays the recorded sessions at once through a simulated
// router of four replicas: routed by the session's id, each session
// reuses its cache as it does alone on one engine (within 2 points);
// round-robin, or the session router without the id, loses most of it.
func TestRouting(t *testing.T) {
	if testing.Short() {
		// At 10 rounds a round-robin's reuse of one session went from 0.15
		// to 0.71 between two runs (the sessions' requests interleave as
		// they come): too few to judge, and 30 take 17 s under -race.
		t.Skip("four sessions at once through every router: it runs without -short (the README's second go test)")
	}
	recs := shortSessions(t, 30)
	const window, replicas = 16000, 4
	rows, err := Routing(context.Background(), recs, window, replicas, Engine{})
	if err != nil {
		t.Fatal(err)
	}
	get := func(route string, id bool) RoutingRow {
		for _, r := range rows {
			if r.Route == route && r.SessionID == id {
				return r
			}
		}
		t.Fatalf("no row %s, id %v", route, id)
		return RoutingRow{}
	}
	single := get("single engine", true)
	for i, s := range single.Sessions {
		if s.Stalled > 0 || s.Prompt == 0 {
			t.Fatalf("%s alone: stalled at %d, %d prompt tokens", s.Session, s.Stalled, s.Prompt)
		}
		for _, tc := range []struct {
			route string
			id    bool
			near  bool
		}{
			{string(sim.SessionRoute), true, true},
			{string(sim.SessionRoute), false, false},
			{string(sim.RoundRobin), true, false},
		} {
			r := get(tc.route, tc.id).Sessions[i]
			d := r.Share() - s.Share()
			t.Logf("%s through %s (id %v): reuse %.3f, alone %.3f", s.Session, tc.route, tc.id, r.Share(), s.Share())
			if r.Stalled > 0 {
				t.Errorf("%s through %s (id %v) stalled at round %d", s.Session, tc.route, tc.id, r.Stalled)
			}
			if tc.near && math.Abs(d) > 0.02 {
				t.Errorf("%s through %s with its id reuses %.3f of its prompt, alone %.3f: want within 0.02", s.Session, tc.route, r.Share(), s.Share())
			}
			if !tc.near && d > -0.2 {
				t.Errorf("%s through %s (id %v) reuses %.3f of its prompt, alone %.3f: want a loss", s.Session, tc.route, tc.id, r.Share(), s.Share())
			}
		}
	}
}
