package lsp

import (
	"context"
	"testing"

	"github.com/reika-lsp/reika/agent/tools"
)

func TestRuns(t *testing.T) {
	var rs runs
	runCtx, runCancel := context.WithCancel(context.Background())
	r := &activeRun{cancel: runCancel, key: "7", asked: "fix it"}
	if got := rs.admit(queuedAsk{r: r}, false); got != started {
		t.Fatalf("admit() with no run under way = %v, want started", got)
	}
	second := &activeRun{cancel: func() {}}
	if got := rs.admit(queuedAsk{r: second, instruction: "and this"}, false); got != joined {
		t.Errorf("admit() while the run starts = %v, want joined", got)
	}
	if got := rs.admit(queuedAsk{r: second, instruction: "then this"}, true); got != queued {
		t.Errorf("admit(queue) while a run is under way = %v, want queued", got)
	}
	if got := rs.next(); got != nil {
		t.Errorf("next() while a run is under way = %+v, want nil", got)
	}
	if got := rs.asked(); got != "fix it" {
		t.Errorf("asked() = %q, want %q", got, "fix it")
	}

	reqCtx, reqCancel := context.WithCancel(context.Background())
	rs.track("9", reqCancel)
	rs.cancelRequest("9")
	if reqCtx.Err() == nil || runCtx.Err() != nil {
		t.Errorf("cancelRequest(9): request cancelled %v, run cancelled %v; want true, false", reqCtx.Err() != nil, runCtx.Err() != nil)
	}
	rs.untrack("9")

	rs.cancelRequest("7") // the executeCommand that started the run
	if runCtx.Err() == nil {
		t.Error("cancelRequest of the ask's id did not stop its run")
	}
	rs.over(r)
	if got := rs.admit(queuedAsk{r: second, instruction: "late"}, false); got != queued {
		t.Errorf("admit() as the run ends = %v, want queued", got)
	}
	rs.finish(r)
	if q := rs.next(); q == nil || q.instruction != "then this" || rs.asked() != "" {
		t.Errorf("next() after the run = %+v, want the first queued ask, under way", q)
	}
	if n := rs.dropQueue(); n != 1 {
		t.Errorf("dropQueue() = %d, want the one ask left", n)
	}
	rs.finish(second)
	if rs.busy() || rs.cancel() {
		t.Error("a finished run is still under way")
	}
}

// TestLanded: the end-of-run line says what became of each change, in
// one line.
func TestLanded(t *testing.T) {
	applied := tools.Outcome{Applied: true}
	for _, tc := range []struct {
		changes []change
		want    string
	}{
		{nil, "no changes"},
		{[]change{{"a.go", applied, ""}, {"b.go", applied, ""}}, "2 changes applied to a.go, b.go"},
		{[]change{{"a.go", applied, unconfirmed}}, "1 change applied to a.go (1 unconfirmed: the editor has not sent its text yet)"},
		{[]change{{"a.go", tools.Outcome{}, "you were editing the file"}}, "1 change to a.go not applied: you were editing the file"},
		{[]change{{"a.go", applied, ""}, {"a.go", tools.Outcome{Partial: true}, "you applied only hunk 2"}, {"b.go", tools.Outcome{}, "declined"}},
			"1 change applied, 1 partly applied (you applied only hunk 2), 1 not applied: declined"},
	} {
		r := &activeRun{changes: tc.changes}
		if got := r.landed(); got != tc.want {
			t.Errorf("landed() = %q, want %q", got, tc.want)
		}
	}
}
