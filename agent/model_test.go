package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/sim"
)

// TestModelSwitchWindow: behind one endpoint serving a model with a
// 32k window and one with 8k, a switch to the small one re-reads its
// window, says it, and plans the rest of the session in it: the
// conversation, too long for 8k, is folded in the request that first
// names the small model, and the engine refuses none. A resume plans in the
// small window too, or in the one the engine gives the model now, or,
// where the engine no longer serves it, in the configured model's.
func TestModelSwitchWindow(t *testing.T) {
	ws := t.TempDir()
	var script []sim.Turn
	for i := range 6 {
		name := fmt.Sprintf("part%d.go", i)
		var b strings.Builder
		fmt.Fprintf(&b, "package part\n\n")
		for l := range 120 {
			fmt.Fprintf(&b, "// line %d of %s says what the cache keeps and when it lets go\n", l, name)
		}
		if err := os.WriteFile(filepath.Join(ws, name), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		script = append(script, readTurn(name))
	}
	script = append(script, sim.Turn{Content: "Read them all."})
	srv, url := simURL(t, sim.Config{Model: "coder-big", Models: []string{"coder-small"}, Ctx: 32768,
		ModelCtx: map[string]int{"coder-small": 8192}, Script: script})
	state := t.TempDir()
	s := startOn(t, url, ws, state, "")
	if w := s.Budget().Window; w != 32768 {
		t.Fatalf("window before the switch = %d, want coder-big's 32768", w)
	}
	ask(t, s, "Read the six parts.")
	before := len(recorded(t, srv, 7))
	if last := srv.Requests()[before-1]; last.PromptTokens <= 8192 {
		t.Fatalf("the conversation holds %d tokens: the test needs more than the small window", last.PromptTokens)
	}
	told, err := s.SetModel(context.Background(), "coder-small")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(told, "window of 8192 tokens") || !strings.Contains(told, "folds the conversation first") {
		t.Errorf("told %q, want the new window and the fold", told)
	}
	if w := s.Budget().Window; w != 8192 {
		t.Errorf("window after the switch = %d, want coder-small's 8192", w)
	}
	srv.AppendScript(sim.Turn{Content: "Noted."})
	ask(t, s, "What did the parts say?")
	recs := recorded(t, srv, before+1)
	for _, r := range recs[before:] {
		if !strings.Contains(string(r.Body), `"model":"coder-small"`) {
			t.Errorf("request %d after the switch does not name coder-small", r.Seq)
		}
		if r.Status != 200 || r.PromptTokens > 8192 {
			t.Errorf("request %d after the switch: status %d, %d prompt tokens; want every one within the 8192 window", r.Seq, r.Status, r.PromptTokens)
		}
	}
	t.Logf("the last request on coder-big: %d prompt tokens; the first on coder-small: %d", recs[before-1].PromptTokens, recs[before].PromptTokens)
	if st := s.Stats(); st.Folds == 0 || st.Overflows != 0 {
		t.Errorf("stats %+v: want a fold and no overflow", st)
	}
	path := s.TranscriptPath()
	s.Close()
	resumed := startOn(t, url, ws, state, path)
	if w := resumed.Budget().Window; w != 8192 {
		t.Errorf("window after a resume = %d, want coder-small's 8192", w)
	}
	if m, _ := resumed.Models(); m != "coder-small" {
		t.Errorf("model after a resume = %q, want coder-small", m)
	}
	resumed.Close()

	// The engine started again with another window for the model: the
	// resume plans in it, and says so.
	_, url2 := simURL(t, sim.Config{Model: "coder-big", Models: []string{"coder-small"}, Ctx: 32768,
		ModelCtx: map[string]int{"coder-small": 12288}})
	again := startOn(t, url2, ws, state, path)
	if w := again.Budget().Window; w != 12288 {
		t.Errorf("window after a resume on an engine that gives coder-small 12288 tokens = %d", w)
	}
	said := false
	for _, n := range again.Info().Notices {
		said = said || strings.Contains(n.Text, "has a window of 12288 tokens now")
	}
	if !said {
		t.Errorf("notices %+v: want the new window told", again.Info().Notices)
	}
	again.Close()

	// An engine that no longer serves the model: the configured one's
	// window again.
	_, url3 := simURL(t, sim.Config{Model: "coder-big", Ctx: 32768})
	if w := startOn(t, url3, ws, state, path).Budget().Window; w != 32768 {
		t.Errorf("window after a resume on an engine without coder-small = %d, want coder-big's 32768", w)
	}
}
