package lsp

import (
	"context"
	"testing"
)

func TestRuns(t *testing.T) {
	var rs runs
	runCtx, runCancel := context.WithCancel(context.Background())
	r := &activeRun{cancel: runCancel, key: "7", asked: "fix it"}
	if !rs.start(r) {
		t.Fatal("start() with no run under way = false")
	}
	if rs.start(&activeRun{cancel: func() {}}) {
		t.Error("a second start() while a run is under way = true")
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
	rs.finish(r)
	if rs.busy() || rs.cancel() {
		t.Error("a finished run is still under way")
	}
}
