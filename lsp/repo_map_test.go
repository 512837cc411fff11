package lsp_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

// systemPrompt is the system message of a recorded request.
func systemPrompt(t *testing.T, body []byte) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 || req.Messages[0].Role != "system" {
		t.Fatalf("a request without a system prompt: %v", err)
	}
	return req.Messages[0].Content
}

// The repo map in the prefix never changes within a session: the user's
// edits and the files the agent reads do not move a byte of the system
// prompt or the tools, not even at a fold (here a compaction); what the
// map learnt reaches the model in the recap, after the fold's change point.
func TestRepoMapChangesOnlyAtShrinkEvents(t *testing.T) {
	var turns []sim.Turn
	for i := 0; i < 12; i++ {
		turns = append(turns, sim.Turn{Content: "Looking.", ToolCalls: []sim.ScriptCall{{Name: "read", Arguments: json.RawMessage(`{"path":"calc.go"}`)}}})
	}
	e := lsptest.Start(t, lsptest.Config{
		Caps:  lsptest.Full(),
		Files: map[string]string{"calc.go": "package calc\n\n// Alpha adds.\nfunc Alpha(a, b int) int { return a + b }\n" + strings.Repeat("\n// filler line for the reads\n", 200)},
		Engine: sim.Config{Ctx: 32768, Script: append(turns,
			sim.Turn{Content: "first answer"}, sim.Turn{Content: "second answer"}, sim.Turn{Content: "third answer"})},
	})
	e.Open("calc.go")
	ask := func(what string) {
		from := e.Mark()
		if _, err := e.Exec("reika.ask", map[string]any{"instruction": what}); err != nil {
			t.Fatal(err)
		}
		e.WaitRunEnd(from)
	}
	ask("Read calc.go a few times.")
	reqs := e.Engine.Requests()
	first := systemPrompt(t, reqs[0].Body)
	if !strings.Contains(first, "func Alpha(a, b int) int") {
		t.Fatalf("the first request's map lacks Alpha:\n%s", first)
	}
	for i, r := range reqs {
		if got := systemPrompt(t, r.Body); got != first {
			t.Fatalf("request %d's system prompt differs from the first within one run", i+1)
		}
	}

	// The user adds a function: the next ask's prefix does not move.
	e.Edit("calc.go", "// Alpha adds.", "// Beta subtracts.\nfunc Beta(a, b int) int { return a - b }\n\n// Alpha adds.")
	ask("And now?")
	reqs = e.Engine.Requests()
	if got := systemPrompt(t, reqs[len(reqs)-1].Body); got != first {
		t.Fatalf("the map moved without a shrink event")
	}

	// A compaction folds: the prefix stays, and the recap brings Beta.
	if _, err := e.Exec("reika.compact"); err != nil {
		t.Fatal(err)
	}
	ask("Once more.")
	reqs = e.Engine.Requests()
	last := reqs[len(reqs)-1].Body
	if got := systemPrompt(t, last); got != first {
		t.Errorf("the fold rewrote the system prompt")
	}
	if !strings.Contains(string(last), "The repository map has learnt since the start") || !strings.Contains(string(last), "func Beta(a, b int) int") {
		t.Errorf("after the fold the recap does not carry the map's news (Beta):\n%s", last)
	}
	t.Logf("%d requests", len(reqs))
}

// Through a long run in a small window, with the map on, every shrink
// event leaves the system prompt and the tool definitions byte for byte as
// the first request had them: an event changes the request only after
// them.
func TestEventsKeepThePrefix(t *testing.T) {
	files := map[string]string{}
	var turns []sim.Turn
	for i := 0; i < 30; i++ {
		name := fmt.Sprintf("pkg/f%02d.go", i)
		files[name] = fmt.Sprintf("package pkg\n\n// F%02d works.\nfunc F%02d() int { return %d }\n", i, i, i) + strings.Repeat("// a line of comment to make the file large enough to matter\n", 90)
		turns = append(turns, sim.Turn{Content: "Reading.", ToolCalls: []sim.ScriptCall{{Name: "read", Arguments: json.RawMessage(fmt.Sprintf(`{"path":%q}`, name))}}})
	}
	e := lsptest.Start(t, lsptest.Config{
		Caps:   lsptest.Full(),
		Files:  files,
		Engine: sim.Config{Ctx: 8192, Script: append(turns, sim.Turn{Content: "done"})},
	})
	e.Open("pkg/f00.go")
	from := e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "Read every file under pkg."}); err != nil {
		t.Fatal(err)
	}
	e.WaitRunEnd(from)
	type body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		Tools json.RawMessage `json:"tools"`
	}
	var first body
	events := 0
	var prev []string
	for i, r := range e.Engine.Requests() {
		var b body
		if err := json.Unmarshal(r.Body, &b); err != nil {
			t.Fatal(err)
		}
		if len(b.Tools) == 0 || r.MaxTokens == 1 {
			continue // the warm-up and the note rounds carry no tools
		}
		if first.Messages == nil {
			first = b
		}
		if b.Messages[0].Content != first.Messages[0].Content || string(b.Tools) != string(first.Tools) {
			t.Fatalf("request %d changed the system prompt or the tools", i+1)
		}
		var cur []string
		for _, m := range b.Messages {
			cur = append(cur, m.Role+":"+m.Content)
		}
		for k := range prev {
			if k >= len(cur) || cur[k] != prev[k] {
				events++
				break
			}
		}
		prev = cur
	}
	if events == 0 {
		t.Fatalf("no shrink event happened: the test proves nothing")
	}
	t.Logf("%d shrink events, the prefix unchanged through all", events)
}

// The map takes the open documents' changes off the keystroke path, after
// the fact: the prefix of the next ask still has what the user typed last,
// a burst of edits included, and nothing of a document closed just after
// an edit to it.
func TestRepoMapFollowsTypingAndClose(t *testing.T) {
	e := lsptest.Start(t, lsptest.Config{
		Caps: lsptest.Full(),
		Files: map[string]string{
			"calc.go":  "package calc\n\n// Alpha adds.\nfunc Alpha(a, b int) int { return a + b }\n",
			"scrap.go": "package calc\n\nfunc Scrap() {}\n",
		},
		Engine: sim.Config{Ctx: 32768, Script: []sim.Turn{{Content: "done"}}},
	})
	e.Open("calc.go")
	e.Open("scrap.go")
	for i := 1; i <= 5; i++ {
		e.Edit("calc.go", "// Alpha adds.", fmt.Sprintf("func F%d() {}\n\n// Alpha adds.", i))
	}
	e.Edit("calc.go", "func F3() {}", "func Gamma() {}")
	e.Edit("scrap.go", "func Scrap() {}", "func Scrapped() {}")
	e.Close("scrap.go")
	from := e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "What is there?"}); err != nil {
		t.Fatal(err)
	}
	e.WaitRunEnd(from)
	reqs := e.Engine.Requests()
	prompt := systemPrompt(t, reqs[len(reqs)-1].Body)
	for _, want := range []string{"func Alpha(a, b int) int", "func Gamma()", "func F5()"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the map lacks %q:\n%s", want, prompt)
		}
	}
	for _, gone := range []string{"func F3()", "scrap.go", "Scrap"} {
		if strings.Contains(prompt, gone) {
			t.Errorf("the map has %q:\n%s", gone, prompt)
		}
	}
}
