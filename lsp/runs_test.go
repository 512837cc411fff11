package lsp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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
// one line, each with its own true reason.
func TestLanded(t *testing.T) {
	applied := tools.Outcome{Applied: true}
	not := tools.Outcome{}
	ch := func(path string, out tools.Outcome, why string, f fate) change {
		return change{path, out, account{why: why, fate: f}}
	}
	for _, tc := range []struct {
		name    string
		changes []change
		want    string
	}{
		{"none", nil, "no changes"},
		{"applied", []change{ch("a.go", applied, "", asTold), ch("b.go", applied, "", asTold)}, "2 changes applied to a.go, b.go"},
		{"unconfirmed", []change{ch("a.go", applied, "", unconfirmed)}, "1 change applied to a.go (1 unconfirmed: the editor has not sent its text yet)"},
		{"over typing", []change{ch("a.go", applied, "a.go line 3", overTyping)}, "1 change applied to a.go, but you were typing: check a.go line 3"},
		{"undone", []change{ch("a.go", not, "undone by you", undoneByYou)}, "1 change to a.go undone by you"},
		{"undone among applied", []change{ch("a.go", applied, "", asTold), ch("b.go", not, "undone by you", undoneByYou)}, "1 change applied, 1 undone by you"},
		{"typing there", []change{ch("a.go", not, "you were typing there", asTold)}, "1 change to a.go not applied: you were typing there"},
		{"declined", []change{ch("a.go", not, "declined", asTold)}, "1 change to a.go not applied: declined"},
		{"lines changed", []change{ch("a.go", not, PlanChanged.Short(), asTold)}, "1 change to a.go not applied: you had changed those lines or the lines next to them"},
		{"file gone", []change{ch("a.go", not, PlanGone.Short(), asTold)}, "1 change to a.go not applied: the file no longer exists"},
		{"editor", []change{ch("a.go", not, "the editor did not take it", asTold)}, "1 change to a.go not applied: the editor did not take it"},
		{"each its reason", []change{ch("a.go", not, "you were typing there", asTold), ch("b.go", not, "declined", asTold)},
			"2 not applied: you were typing there (a.go); declined (b.go)"},
		{"mixed", []change{ch("a.go", applied, "", asTold), ch("a.go", tools.Outcome{Partial: true}, "you applied only hunk 2", asTold), ch("b.go", not, "declined", asTold)},
			"1 change applied, 1 partly applied (you applied only hunk 2), 1 not applied: declined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &activeRun{changes: tc.changes}
			if got := r.landed(); got != tc.want {
				t.Errorf("landed() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRefusalOf: an editor's "no" is read for what it is; "declined" only
// for the user's.
func TestRefusalOf(t *testing.T) {
	for _, tc := range []struct {
		msg          string
		isErr, moved bool
		want         editorNo
	}{
		{"Edits on `calc.go' require version 0, you have 55", true, false, refusedStale},
		{"User cancelled server edit", true, false, refusedByUser},
		{"version 1 of calc.go differs from the editor's version 2", false, true, refusedStale},
		{"Buffer 1 newer than edits", false, false, refusedStale},
		{"", false, true, refusedStale},
		{"not now, I am refactoring this file", false, false, refusedByUser},
		{"", false, false, refusedByUser},
		{"the editor did not answer workspace/applyEdit within 5m0s", true, false, refusedByEditor},
		// A failed write is the editor's, not the user's "no".
		{"Unable to write file '/w/calc.go' (NoPermissions (FileSystemError): Error: EACCES: permission denied)", false, false, refusedByEditor},
		{"EROFS: read-only file system, open '/w/calc.go'", false, false, refusedByEditor},
	} {
		if got := refusalOf(tc.msg, tc.isErr, tc.moved); got != tc.want {
			t.Errorf("refusalOf(%q, %v, %v) = %d, want %d", tc.msg, tc.isErr, tc.moved, got, tc.want)
		}
	}
}

// A read-only file is not written over by "apply the proposal" (a rename
// would replace it all the same), and the user hears it is read-only.
func TestWriteFileAtomicKeepsReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calc.go")
	if err := os.WriteFile(path, []byte("package calc\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	err := writeFileAtomic(path, "package changed\n")
	if !errors.Is(err, errReadOnly) {
		t.Errorf("writeFileAtomic on a 0444 file = %v; want errReadOnly", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "package calc\n" {
		t.Errorf("the read-only file now reads %q", b)
	}
	if !readOnly(path) {
		t.Errorf("readOnly(0444) = false")
	}
}
