package lsp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

// recapMessage is the recap message of a recorded request: the first
// message after the system prompt, when it is one.
func recapMessage(t *testing.T, raw []byte) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &req); err != nil || len(req.Messages) < 2 {
		t.Fatalf("a request without messages: %v", err)
	}
	if c := req.Messages[1].Content; strings.Contains(c, "Recap of earlier turns") {
		return c
	}
	return ""
}

// The user edits the recap (reika.showRecap, change, save); two more folds
// later (reika.compact) the edit is still in the recap, and so is the
// task the recap carries verbatim; the recap document never enters the
// repo map.
func TestEditedRecapSurvivesFolds(t *testing.T) {
	const edit = "decision: keep the old cache, the user says"
	script := append(readTurns("a", 3), sim.Turn{Content: "All three passed."},
		sim.Turn{Content: "logs: a0, a1, a2\nresult: passed"})
	script = append(script, readTurns("b", 2)...)
	script = append(script, sim.Turn{Content: "Both passed."}, sim.Turn{Content: "result: the b logs passed"})
	script = append(script, readTurns("c", 2)...)
	script = append(script, sim.Turn{Content: "Those passed too."}, sim.Turn{Content: "result: the c logs passed"},
		sim.Turn{Content: "Yes."})
	files := buildLogs("a", 3)
	for _, p := range []string{"b", "c"} {
		for k, v := range buildLogs(p, 2) {
			files[k] = v
		}
	}
	e := lsptest.Start(t, lsptest.Config{Caps: lsptest.Full(), Files: files, Engine: sim.Config{Ctx: 16384, Script: script}})
	e.Open("README.md")
	ask := func(what string) {
		t.Helper()
		from := e.Mark()
		if _, err := e.Exec("reika.ask", map[string]any{"instruction": what}); err != nil {
			t.Fatal(err)
		}
		e.WaitRunEnd(from)
	}
	compact := func() {
		t.Helper()
		raw, err := e.Exec("reika.compact")
		if err != nil || !strings.Contains(string(raw), `"compacted":true`) {
			t.Fatalf("reika.compact = %s, %v\n%s", raw, err, e.Dump())
		}
	}

	ask("Read the a logs one by one and tell me whether they passed.")
	compact()
	from := e.Mark()
	if _, err := e.Exec("reika.showRecap"); err != nil {
		t.Fatal(err)
	}
	e.WaitLine(from, `showDocument .*recap-.*\.md`)
	shown := e.Shown()
	doc := shown[len(shown)-1]
	text, _ := e.Doc(doc)
	if !strings.Contains(text.Text, "result: passed") {
		t.Fatalf("the recap document lacks the note:\n%s", text.Text)
	}
	e.Edit(doc, "result: passed", "result: passed\n"+edit)
	from = e.Mark()
	e.Save(doc)
	e.WaitLine(from, "the edited recap replaces the old one")

	const task = "Now read the c logs one by one (task C-42)."
	n := len(e.Engine.Requests())
	ask("Now the b logs, one by one.")
	// The request right after the edit carries it, and still the task
	// the folded turn opened with.
	afterEdit := recapMessage(t, e.Engine.Requests()[n].Body)
	if !strings.Contains(afterEdit, edit) || !strings.Contains(afterEdit, "The task, verbatim:\nRead the a logs one by one") {
		t.Errorf("the request after the edit carries the recap:\n%s", afterEdit)
	}
	compact()
	ask(task)
	compact()
	ask("Did they all pass?")

	reqs := e.Engine.Requests()
	recap := recapMessage(t, reqs[len(reqs)-1].Body)
	if !strings.Contains(recap, edit) {
		t.Errorf("two folds after the edit the recap lacks it:\n%s", recap)
	}
	// The session's first instruction is its task; every later one the
	// user gave stays word for word too.
	if !strings.Contains(recap, "The task, verbatim:\nRead the a logs one by one") || !strings.Contains(recap, "Then the user said, verbatim:\n"+task) {
		t.Errorf("the recap lacks the task or the later instruction verbatim:\n%s", recap)
	}
	if !strings.Contains(recap, "result: the c logs passed") {
		t.Errorf("the recap lacks the last fold's note:\n%s", recap)
	}
	// The recap document lives in the state directory, outside the
	// workspace: the map the compactions rebuilt never took it in.
	for i, r := range reqs {
		if sys := systemPrompt(t, r.Body); strings.Contains(sys, "recap-") || strings.Contains(sys, e.StateDir) {
			t.Errorf("request %d's system prompt names the recap document", i+1)
		}
	}
}

// Documents outside the workspace folders never reach the system prompt's
// repo map; those inside do.
func TestOutsideDocumentsStayOutOfTheMap(t *testing.T) {
	e := lsptest.Start(t, lsptest.Config{
		Caps:   lsptest.Full(),
		Files:  map[string]string{"inside.go": "package inside\n\n// InsideFunc is mapped.\nfunc InsideFunc() int { return 1 }\n"},
		Engine: sim.Config{Script: []sim.Turn{{Content: "ok"}}},
	})
	outside := filepath.Join(filepath.Dir(e.Root), "elsewhere", "lib.go")
	if err := os.MkdirAll(filepath.Dir(outside), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outside, []byte("package lib\n\n// OutsideFunc must not be mapped.\nfunc OutsideFunc() int { return 2 }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Open(outside)
	e.Open("inside.go")
	from := e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "What is here?"}); err != nil {
		t.Fatal(err)
	}
	e.WaitRunEnd(from)
	sys := systemPrompt(t, e.Engine.Requests()[0].Body)
	if !strings.Contains(sys, "InsideFunc") {
		t.Fatalf("the map lacks the workspace's document:\n%s", sys)
	}
	if strings.Contains(sys, "OutsideFunc") || strings.Contains(sys, "elsewhere") {
		t.Errorf("a document outside the workspace entered the map:\n%s", sys)
	}
}
