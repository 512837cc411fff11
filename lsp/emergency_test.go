package lsp_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

// The engine's window is smaller than the one configured: it refuses a
// request as too long, and the user reads one line that says what the
// emergency recovery did, with the engine's figures, before the retry.
func TestEmergencyIsShownInOneLine(t *testing.T) {
	script := append(readTurns("a", 6), sim.Turn{Content: "They passed."})
	e := lsptest.Start(t, lsptest.Config{
		Caps:   lsptest.Full(),
		Files:  buildLogs("a", 6),
		Env:    map[string]string{"REIKA_CONTEXT_WINDOW": "32768"},
		Engine: sim.Config{Ctx: 8192, Script: script},
	})
	from := e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "Read the a logs one by one."}); err != nil {
		t.Fatal(err)
	}
	e.WaitRunEnd(from)
	told := regexp.MustCompile(`^showMessage warning: Reika: the engine refused the request as too long \(\d+ tokens, window 8192\): ` +
		`(shed \d+ results?|folded \d+ messages?|shed \d+ results? and folded \d+ messages?|cut the newest results), retrying once$`)
	var lines, emergency []string
	for _, ev := range e.Events()[from:] {
		if strings.HasPrefix(ev.Line, "showMessage") {
			lines = append(lines, ev.Line)
			if strings.Contains(ev.Line, "too long") || strings.Contains(ev.Line, "emergency") {
				emergency = append(emergency, ev.Line)
			}
		}
	}
	overflows := 0
	for _, r := range e.Engine.Requests() {
		if r.Status == 400 {
			overflows++
		}
	}
	if overflows == 0 {
		t.Fatalf("the engine refused nothing: the test tested nothing\n%s", strings.Join(lines, "\n"))
	}
	t.Logf("%d refusals; shown: %q", overflows, emergency)
	if len(emergency) != overflows {
		t.Fatalf("the user was shown %q for %d refusals, want one line each", emergency, overflows)
	}
	for _, l := range emergency {
		if !told.MatchString(l) {
			t.Errorf("the emergency line %q does not say what happened", l)
		}
	}
}
