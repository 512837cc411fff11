package lsp_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/agent/transcript"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

// readTurns are n scripted rounds that read logs/<prefix><i>.log.
func readTurns(prefix string, n int) []sim.Turn {
	var out []sim.Turn
	for i := 0; i < n; i++ {
		out = append(out, sim.Turn{Content: fmt.Sprintf("Reading log %s%d.", prefix, i),
			ToolCalls: []sim.ScriptCall{{Name: "read", Arguments: json.RawMessage(fmt.Sprintf(`{"path":"logs/%s%d.log"}`, prefix, i))}}})
	}
	return out
}

// buildLogs are n build logs of about 9 KB each.
func buildLogs(prefix string, n int) map[string]string {
	files := map[string]string{"README.md": "# Builds\n"}
	for i := 0; i < n; i++ {
		var b strings.Builder
		for l := 1; l <= 140; l++ {
			fmt.Fprintf(&b, "build %s%d step %d: compiled package pkg%d in %dms without warnings\n", prefix, i, l, l, 100+l*7%90)
		}
		files[fmt.Sprintf("logs/%s%d.log", prefix, i)] = b.String()
	}
	return files
}

// body is a recorded request's messages and tools, raw.
type body struct {
	Messages []json.RawMessage `json:"messages"`
	Tools    json.RawMessage   `json:"tools"`
}

func parseBody(t *testing.T, raw []byte) body {
	t.Helper()
	var b body
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatalf("a recorded request is not JSON: %v", err)
	}
	return b
}

// planEvents counts the plan records of the transcripts in dir by event.
func planEvents(t *testing.T, dir string) map[string]int {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	out := map[string]int{}
	for _, p := range paths {
		recs, err := transcript.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Kind == transcript.KindPlan {
				ev, err := r.PlanEvent()
				if err != nil {
					t.Fatal(err)
				}
				out[ev.String()]++
			}
		}
	}
	return out
}

// A long session that shed and folded, a restart of the editor and the
// server over the same state, reika.resume, an ask: the first request the
// engine gets is the last one before the restart plus what came after it
// (the answer and the new message), byte for byte — the same system
// prompt and tools, the same recap, the same shed forms.
func TestResumeContinuesTheLastRequest(t *testing.T) {
	const n = 14
	script := readTurns("a", n)
	script = append(script, sim.Turn{Content: "Every build passed."},
		sim.Turn{Content: "state: every build passed\nslowest: none stands out"})
	script = append(script, readTurns("b", 6)...)
	script = append(script, sim.Turn{Content: "The b builds passed too."}, sim.Turn{Content: "Yes, all of them."})
	files := buildLogs("a", n)
	for k, v := range buildLogs("b", 6) {
		files[k] = v
	}
	e := lsptest.Start(t, lsptest.Config{
		Caps:   lsptest.Full(),
		Files:  files,
		Engine: sim.Config{Ctx: 16384, Script: script},
	})
	e.Open("README.md")
	ask := func(e *lsptest.Editor, what string) {
		t.Helper()
		from := e.Mark()
		if _, err := e.Exec("reika.ask", map[string]any{"instruction": what}); err != nil {
			t.Fatal(err)
		}
		if ev := e.WaitRunEnd(from); !strings.Contains(ev.Line, "showMessage info: Reika: ") {
			t.Fatalf("the ask %q ended with %q\n%s", what, ev.Line, e.Dump())
		}
	}
	ask(e, "Read every build log under logs/ named a*, one by one, and tell me whether they passed.")
	if _, err := e.Exec("reika.compact"); err != nil {
		t.Fatal(err)
	}
	ask(e, "Now the b logs, one by one.")
	events := planEvents(t, e.StateDir)
	t.Logf("planned before the restart: %v", events)
	if events["shed"]+events["fold"] == 0 || events["fold"] == 0 {
		t.Fatalf("the session planned %v: want automatic shrink events and a fold before the restart", events)
	}
	before := e.Engine.Requests()
	last := parseBody(t, before[len(before)-1].Body)
	if err := e.Shutdown(); err != nil {
		t.Fatal(err)
	}

	// The code moved on meanwhile: a rebuilt prefix would carry it in its
	// repo map. The resumed one is the one the requests carried.
	files["thing.go"] = "package thing\n\n// NewThing makes a thing.\nfunc NewThing() int { return 1 }\n"
	e2 := lsptest.Start(t, lsptest.Config{Caps: lsptest.Full(), Files: files, After: e})
	e2.Open("thing.go")
	raw, err := e2.Exec("reika.resume")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Resumed bool `json:"resumed"`
	}
	json.Unmarshal(raw, &res)
	if !res.Resumed {
		t.Fatalf("reika.resume = %s", raw)
	}
	if log := e2.ServerLog() + strings.Join(e2.Transcript(), "\n"); !strings.Contains(log, "replaying how they were sent, shed and folded") {
		t.Errorf("the log does not say the resume replayed the planner:\n%s", strings.Join(e2.Transcript(), "\n"))
	}
	ask(e2, "Did all of them pass?")
	after := e2.Engine.Requests()
	if len(after) <= len(before) {
		t.Fatal("no request after the resume")
	}
	first := parseBody(t, after[len(before)].Body)
	if !bytes.Equal(first.Tools, last.Tools) {
		t.Errorf("the tools changed across the restart")
	}
	if len(first.Messages) != len(last.Messages)+2 {
		t.Fatalf("the first request after the resume has %d messages, want the last one's %d plus the answer and the new message",
			len(first.Messages), len(last.Messages))
	}
	for i, m := range last.Messages {
		if !bytes.Equal(first.Messages[i], m) {
			t.Fatalf("message %d differs across the restart:\nbefore %s\nafter  %s", i, clipBytes(m), clipBytes(first.Messages[i]))
		}
	}
	if got := string(first.Messages[len(first.Messages)-1]); !strings.Contains(got, "Did all of them pass?") {
		t.Errorf("the new message is %s", got)
	}
	// The engine kept running: its cache still holds the last request.
	if rec := after[len(before)]; rec.CacheN < before[len(before)-1].PromptTokens-4 {
		t.Errorf("the engine reused %d of the last request's %d tokens", rec.CacheN, before[len(before)-1].PromptTokens)
	}
}

func clipBytes(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
