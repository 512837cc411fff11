package lsp_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/engine/llamatest"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

func askAndWait(t *testing.T, e *lsptest.Editor, what string) {
	t.Helper()
	from := e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": what}); err != nil {
		t.Fatal(err)
	}
	if ev := e.WaitRunEnd(from); !strings.Contains(ev.Line, "showMessage info: Reika: ") {
		t.Fatalf("the ask %q ended with %q\n%s", what, ev.Line, e.Dump())
	}
}

// The acceptance scenario of the engine's cache across restarts: a long
// session on an engine started with --slot-save-path, the server shut
// down and the engine restarted (its cache gone), a new server over the
// same state, reika.resume, the next ask: the engine reuses at least 95%
// of the first request's prompt, restored from the slot saved after the
// last run.
//
// Without --slot-save-path the same scenario prefills the whole prompt:
// the figure the README gives as "before".
func TestResumeRestoresTheEngineCache(t *testing.T) {
	for _, saving := range []bool{true, false} {
		t.Run(fmt.Sprintf("slot-save-path=%v", saving), func(t *testing.T) { resumeAfterEngineRestart(t, saving) })
	}
}

func resumeAfterEngineRestart(t *testing.T, saving bool) {
	const n = 10
	script := append(readTurns("a", n), sim.Turn{Content: "Every build passed."})
	engine := sim.Config{Ctx: 32768, Script: script}
	if saving {
		engine.SlotSavePath = t.TempDir()
	}
	e := lsptest.Start(t, lsptest.Config{Caps: lsptest.Full(), Files: buildLogs("a", n), Engine: engine})
	e.Open("README.md")
	askAndWait(t, e, "Read every build log under logs/, one by one, and tell me whether they passed.")
	before := e.Engine.Requests()
	if err := e.Shutdown(); err != nil {
		t.Fatal(err)
	}

	engine.Script = []sim.Turn{{Content: "Yes, all of them."}}
	e2 := lsptest.Start(t, lsptest.Config{Caps: lsptest.Full(), Files: buildLogs("a", n), After: e, NewEngine: true, Engine: engine})
	e2.Open("README.md")
	if raw, err := e2.Exec("reika.resume"); err != nil || !strings.Contains(string(raw), `"resumed":true`) {
		t.Fatalf("reika.resume = %s, %v", raw, err)
	}
	if log := e2.ServerLog() + strings.Join(e2.Transcript(), "\n"); saving && !strings.Contains(log, "restored") {
		t.Errorf("the log does not say the cache was restored:\n%s", strings.Join(e2.Transcript(), "\n"))
	}
	askAndWait(t, e2, "Did all of them pass?")
	first := e2.Engine.Requests()[0]
	last := before[len(before)-1]
	t.Logf("before the restart: last prompt %d tokens; after: first prompt %d tokens, cache_n %d (%.1f%%)",
		last.PromptTokens, first.PromptTokens, first.CacheN, 100*float64(first.CacheN)/float64(first.PromptTokens))
	if !saving {
		if first.CacheN != 0 {
			t.Errorf("without --slot-save-path the restarted engine reused %d tokens, want 0", first.CacheN)
		}
		return
	}
	if float64(first.CacheN) < 0.95*float64(first.PromptTokens) {
		t.Errorf("the first request after the restart reused %d of %d prompt tokens, want at least 95%%", first.CacheN, first.PromptTokens)
	}
	raw, err := e2.Exec("reika.status")
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Slot       *int `json:"slot"`
		SlotSaving bool `json:"slot_saving"`
	}
	json.Unmarshal(raw, &st)
	if st.Slot == nil || *st.Slot != 0 || !st.SlotSaving {
		t.Errorf("reika.status = %s, want slot 0 saved after each run", raw)
	}
}

// Two editor windows (two servers, two workspaces) on one engine with two
// slots, their asks interleaved: each server pins its own slot, so each
// append is reused to the token. Unpinned, the second window's first
// request shares the whole system prompt with the first window's slot
// and llama.cpp would put it there, evicting the first conversation.
func TestTwoServersKeepTheirSlots(t *testing.T) {
	var script []sim.Turn
	for i := range 6 {
		script = append(script, sim.Turn{Content: fmt.Sprintf("Answer %d: the logs look fine.", i)})
	}
	a := lsptest.Start(t, lsptest.Config{Caps: lsptest.Full(), Files: buildLogs("a", 1),
		Engine: sim.Config{Ctx: 32768, Slots: 2, Script: script}})
	b := lsptest.Start(t, lsptest.Config{Caps: lsptest.Full(), Files: buildLogs("b", 1),
		Front: func(string) string { return a.Engine.URL }})
	a.Open("README.md")
	b.Open("README.md")
	for i := range 3 {
		askAndWait(t, a, fmt.Sprintf("Question %d from the first window: do the logs look fine?", i))
		askAndWait(t, b, fmt.Sprintf("Question %d from the second window: do the logs look fine?", i))
	}
	recs := a.Engine.Requests()
	if len(recs) != 6 {
		t.Fatalf("%d requests, want 6", len(recs))
	}
	slots := map[int]bool{}
	last := map[int]sim.RequestRecord{}
	for _, r := range recs {
		slots[r.Slot] = true
		if prev, ok := last[r.Slot]; ok && r.CacheN < prev.PromptTokens {
			t.Errorf("request %d in slot %d reused %d tokens, want the previous request's %d", r.Seq, r.Slot, r.CacheN, prev.PromptTokens)
		}
		last[r.Slot] = r
	}
	if len(slots) != 2 {
		t.Errorf("the requests went to slots %v, want two", slots)
	}
}

// The acceptance scenario on a real llama-server (llamatest) started with
// --slot-save-path: a session, the server shut down and the engine
// restarted (a new process, its cache gone), a new server, reika.resume,
// the next ask. The real engine restores the slot file Reika had it save
// after the last run, and reports cache_n of at least 95% of the first
// request's prompt.
//
// Without --slot-save-path the restarted engine prefills it all: the
// README's "before".
func TestResumeRestoresARealEngineCache(t *testing.T) {
	if testing.Short() {
		t.Skip("a real engine started three times: it runs without -short (go test -tags long ./... in .ci/run); TestResumeRestoresTheEngineCache stands for it on the simulated one")
	}
	for _, saving := range []bool{true, false} {
		t.Run(fmt.Sprintf("slot-save-path=%v", saving), func(t *testing.T) { resumeAfterRealEngineRestart(t, saving) })
	}
}

func resumeAfterRealEngineRestart(t *testing.T, saving bool) {
	saves := ""
	if saving {
		saves = t.TempDir()
	}
	const n = 14
	script := append(shortReadTurns("a", n), sim.Turn{Content: "Every build passed."})
	var proxy *llamatest.Proxy
	front := func(simURL string) string {
		real := llamatest.Start(t, llamatest.Options{Ctx: 16384, SlotSavePath: saves})
		proxy = llamatest.StartProxy(t, real.URL, simURL)
		return proxy.URL
	}
	e := lsptest.Start(t, lsptest.Config{Caps: lsptest.Full(), Files: shortLogs("a", n), Engine: sim.Config{Ctx: 16384, Script: script},
		Timeout: 45 * time.Second, Front: front})
	e.Open("README.md")
	askAndWait(t, e, "Read every build log under logs/, one by one, and tell me whether they passed.")
	before := proxy.Exchanges()
	if err := e.Shutdown(); err != nil {
		t.Fatal(err)
	}

	e2 := lsptest.Start(t, lsptest.Config{Caps: lsptest.Full(), Files: shortLogs("a", n), After: e, NewEngine: true,
		Engine: sim.Config{Ctx: 16384, Script: []sim.Turn{{Content: "Yes, all of them."}}}, Timeout: 45 * time.Second, Front: front})
	e2.Open("README.md")
	if raw, err := e2.Exec("reika.resume"); err != nil || !strings.Contains(string(raw), `"resumed":true`) {
		t.Fatalf("reika.resume = %s, %v", raw, err)
	}
	if log := e2.ServerLog() + strings.Join(e2.Transcript(), "\n"); saving && !strings.Contains(log, "restored") {
		t.Fatalf("the log does not say the cache was restored:\n%s", strings.Join(e2.Transcript(), "\n"))
	}
	askAndWait(t, e2, "Did all of them pass?")
	xs := proxy.Exchanges()
	if len(xs) == 0 {
		t.Fatal("no request reached the restarted engine")
	}
	first, last := xs[0], before[len(before)-1]
	t.Logf("real llama-server: last prompt before the restart %d tokens; first after: %d tokens, cache_n %d (%.1f%%), prompt_n %d, %.0f ms",
		last.PromptTokens, first.PromptTokens, first.CacheN, 100*float64(first.CacheN)/float64(first.PromptTokens), first.PromptN, first.PromptMS)
	if !saving {
		if first.CacheN != 0 {
			t.Errorf("without --slot-save-path the restarted engine reused %d tokens, want 0", first.CacheN)
		}
		return
	}
	if float64(first.CacheN) < 0.95*float64(first.PromptTokens) {
		t.Errorf("the real engine reused %d of %d prompt tokens after the restart, want at least 95%%", first.CacheN, first.PromptTokens)
	}
}
