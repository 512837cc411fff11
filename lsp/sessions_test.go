package lsp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/lsp"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

// reika.listSessions lists the workspace's sessions newest first, the one
// in force marked; reika.resume {id} resumes one of them, and refuses an
// id that names none.
func TestListSessionsAndResumeOne(t *testing.T) {
	e := lsptest.Start(t, lsptest.Config{
		Caps:   lsptest.Full(),
		Files:  map[string]string{"main.go": "package main\n"},
		Engine: sim.Config{Script: []sim.Turn{{Content: "the first answer"}, {Content: "the second answer"}, {Content: "the third answer"}}},
	})
	for i, q := range []string{"the first question", "the second question"} {
		if i > 0 {
			if _, err := e.Exec("reika.newSession"); err != nil {
				t.Fatal(err)
			}
		}
		from := e.Mark()
		if _, err := e.Exec("reika.ask", map[string]any{"instruction": q}); err != nil {
			t.Fatal(err)
		}
		e.WaitRunEnd(from)
	}
	raw, err := e.Exec("reika.listSessions")
	if err != nil {
		t.Fatal(err)
	}
	var list lsp.SessionsResult
	json.Unmarshal(raw, &list)
	if len(list.Sessions) != 2 || list.Sessions[0].Title != "the second question" || !list.Sessions[0].Current ||
		list.Sessions[1].Title != "the first question" || list.Sessions[1].Current {
		t.Fatalf("reika.listSessions = %s, want the second session (in force) then the first", raw)
	}
	raw, err = e.Exec("reika.resume", map[string]any{"id": list.Sessions[1].ID})
	if err != nil {
		t.Fatal(err)
	}
	var res lsp.ResumeResult
	json.Unmarshal(raw, &res)
	if !res.Resumed || res.Messages != 2 {
		t.Fatalf("reika.resume {id} = %s, want the first session's 2 messages", raw)
	}
	from := e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "the third question"}); err != nil {
		t.Fatal(err)
	}
	e.WaitRunEnd(from)
	reqs := e.Engine.Requests()
	if last := string(reqs[len(reqs)-1].Body); !strings.Contains(last, "the first question") || strings.Contains(last, "the second question") {
		t.Errorf("the request after resuming the first session:\n%s", last)
	}
	if _, err := e.Exec("reika.resume", map[string]any{"id": "../elsewhere"}); err == nil {
		t.Errorf("reika.resume of an id that names no session succeeded")
	}
}

// reika.setModel without a model says the model and those the engine
// lists; with one it switches, says the new model's window and what the
// switch costs, the status line shows that window, and the next request
// names it. A model the engine does not list is refused.
func TestSetModel(t *testing.T) {
	e := lsptest.Start(t, lsptest.Config{
		Caps:   lsptest.Full(),
		Files:  map[string]string{"main.go": "package main\n"},
		Engine: sim.Config{Model: "coder-7b", Models: []string{"coder-32b"}, ModelCtx: map[string]int{"coder-32b": 16384}, Script: []sim.Turn{{Content: "one"}, {Content: "two"}}},
	})
	raw, err := e.Exec("reika.setModel")
	if err != nil {
		t.Fatal(err)
	}
	var m lsp.ModelResult
	json.Unmarshal(raw, &m)
	if m.Model != "coder-7b" || strings.Join(m.Models, " ") != "coder-7b coder-32b" {
		t.Fatalf("reika.setModel = %s, want coder-7b of coder-7b and coder-32b", raw)
	}
	from := e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "the first question"}); err != nil {
		t.Fatal(err)
	}
	e.WaitRunEnd(from)
	from = e.Mark()
	raw, err = e.Exec("reika.setModel", map[string]any{"model": "coder-32b"})
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(raw, &m)
	if m.Model != "coder-32b" || !strings.Contains(m.Told, "window of 16384 tokens") || !strings.Contains(m.Told, "prefills it all again") {
		t.Fatalf("reika.setModel coder-32b = %s, want the switch, its window and its cost", raw)
	}
	e.WaitFor("reika/status with coder-32b's window", from, func(ev lsptest.Event) bool {
		var p lsp.StatusParams
		return ev.Method == "reika/status" && json.Unmarshal(ev.Params, &p) == nil && p.Window == 16384
	})
	from = e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "the second question"}); err != nil {
		t.Fatal(err)
	}
	e.WaitRunEnd(from)
	reqs := e.Engine.Requests()
	if last := string(reqs[len(reqs)-1].Body); !strings.Contains(last, `"model":"coder-32b"`) {
		t.Errorf("the request after the switch:\n%s", last)
	}
	if _, err := e.Exec("reika.setModel", map[string]any{"model": "gpt-9"}); err == nil {
		t.Errorf("a model the engine does not serve was set")
	}
}
