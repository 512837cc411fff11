package editors

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/internal/testslow"
)

// The race and the undo in the real VS Code (code-server, as in
// vscode_test.go). The driver types and undoes through VS Code's own API
// (TextEditor.edit, the undo command) with the extension's handlers in
// place, and records each trial; the judging is in trials_test.go.

// vscodeTrial is a trial as the driver recorded it, with the summary of
// the run's reika/answer and when things happened, in ms after the ask.
type vscodeTrial struct {
	trial
	Summary string `json:"summary"`
	TypeAt  int    `json:"typeAt"`  // when the user was to type
	TypedAt int    `json:"typedAt"` // when the editor had taken the line
	// TypingRefused counts the user's line refused by TextEditor.edit
	// (the document moved on before it applied) and typed again.
	TypingRefused int   `json:"typingRefused"`
	EditsAt       []int `json:"editsAt"` // when each workspace/applyEdit reached the extension
}

// vscodeLatency is how long the engine takes to send each edit of the
// race; the user types from 100 ms before it to 80 ms after.
const vscodeLatency = 400 * time.Millisecond

// vscodeScenario runs code-server with the driver in mode on r, the
// binary through reika.serverPath, and returns the record of that
// scenario.
func vscodeScenario(t *testing.T, r *rig, mode string, env ...string) driverRecord {
	t.Helper()
	recs := runCodeServer(t, r, map[string]any{"reika.endpoint": r.Endpoint, "reika.serverPath": r.Bin},
		r.Env(append([]string{"REIKA_DRIVER_MODE=" + mode}, env...)...))
	for _, rec := range recs {
		if rec.Scenario == mode {
			return rec
		}
	}
	t.Fatalf("the driver wrote no %s record", mode)
	return driverRecord{}
}

// checkSummary checks that the end line carries the summary the run's
// reika/answer gave (the panel shows that one): both say the same of the
// edit.
func checkSummary(t *testing.T, what string, tr vscodeTrial) {
	t.Helper()
	if tr.Summary == "" || !strings.HasSuffix(tr.Final, " · "+tr.Summary) {
		t.Errorf("%s: the end line %q does not end with the summary of reika/answer %q", what, tr.Final, tr.Summary)
	}
}

// TestVSCodeRace: ten asks in one VS Code session, each on Fi's return
// line; while the engine takes its time, the user types a line above Fi
// (at the top of the file for odd i, right above Fi for even i), from a
// little before the edit is due to a little after. The edit is planned on
// the typing, or arrives for a version VS Code has passed and is refused
// and placed again, or lands before the typing. No trial may put it on a
// wrong line, and each end line says what the document shows.
func TestVSCodeRace(t *testing.T) {
	longTrial(t)
	r := newRig(t, withLatency(t, raceScript(raceTrials), vscodeLatency), map[string]string{"greet.go": raceFile(raceTrials)})
	start := time.Now()
	rec := vscodeScenario(t, r, "race", fmt.Sprintf("REIKA_DRIVER_TRIALS=%d", raceTrials),
		fmt.Sprintf("REIKA_DRIVER_LATENCY_MS=%d", vscodeLatency.Milliseconds()))
	t.Logf("code-server and %d trials in %v", raceTrials, time.Since(start).Round(time.Millisecond))
	var plain []trial
	for i, tr := range rec.Trials {
		t.Logf("trial %d: typed at %d ms (due at %d, typed again %d times), the edits came at %v ms", i+1, tr.TypedAt, tr.TypeAt, tr.TypingRefused, tr.EditsAt)
		checkSummary(t, fmt.Sprintf("trial %d", i+1), tr)
		plain = append(plain, tr.trial)
	}
	judgeRace(t, raceFile(raceTrials), plain)
}

// TestVSCodeUndo: the edit lands and the user runs VS Code's undo in its
// editor 50 ms later, while the run waits for its second round (a read,
// which the engine sends late). The server sees the undo in a later
// didChange: it must not apply the edit again, and the end line says it
// was undone by the user; the document ends without it.
func TestVSCodeUndo(t *testing.T) {
	longTrial(t)
	// The edit's latency gives the driver time to make sure greet.go's
	// editor has the focus before it lands (the panel opens without it;
	// the driver clicks back into greet.go before the undo should anything
	// have taken it); the read's, the undo time to come before the read's
	// result.
	script := `[` + strings.TrimSuffix(greetEdit, "}") + `, "fault": {"latency": "` + testslow.Scale(2*time.Second).String() + `"}},
  {"tool_calls": [{"name": "read", "arguments": {"path": "greet.go"}}], "fault": {"latency": "500ms"}},
  {"content": "Done."}]`
	r := newRig(t, script, map[string]string{"greet.go": greetGo})
	start := time.Now()
	rec := vscodeScenario(t, r, "undo")
	t.Logf("code-server and the undo in %v; the focus back in the editor %d ms after the ask; the undo %d ms after the edit landed, the focus on %s (the active editor %s); answers %q; end line %q",
		time.Since(start).Round(time.Millisecond), rec.Undo.Refocused, rec.Undo.After, rec.Focused, rec.Undo.Active, rec.Trial.Answers, rec.Trial.Final)
	if !strings.HasSuffix(rec.Undo.Active, "/greet.go") || !strings.Contains(rec.Focused, "edit-context") && !strings.Contains(rec.Focused, "inputarea") {
		t.Fatalf("the undo ran with the focus on %s and %q the active editor, want greet.go's editor", rec.Focused, rec.Undo.Active)
	}
	judgeUndo(t, greetGo, rec.Trial.trial)
	checkSummary(t, "the undo", rec.Trial)
	if !strings.Contains(rec.Trial.Final, "undone by you") {
		t.Errorf("server: the end line does not say the change was undone by you: %q", rec.Trial.Final)
	}
	if got := r.read(t, "greet.go"); got != greetGo {
		t.Errorf("greet.go on disk changed (nothing saved it):\n%s", got)
	}
}
