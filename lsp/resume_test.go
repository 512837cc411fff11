package lsp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

// After a new session (or an editor restart), reika.resume brings back the
// workspace's previous conversation from its transcript.
func TestResume(t *testing.T) {
	e := lsptest.Start(t, lsptest.Config{
		Caps:   lsptest.Full(),
		Files:  map[string]string{"main.go": "package main\n"},
		Engine: sim.Config{Script: []sim.Turn{{Content: "the first answer"}, {Content: "the second answer"}}},
	})
	var res map[string]any
	raw, err := e.Exec("reika.resume")
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(raw, &res)
	if res["resumed"] != false {
		t.Errorf("reika.resume with nothing to resume = %v, want resumed false", res)
	}

	from := e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "the first question"}); err != nil {
		t.Fatal(err)
	}
	e.WaitRunEnd(from)
	if _, err := e.Exec("reika.newSession"); err != nil {
		t.Fatal(err)
	}
	raw, err = e.Exec("reika.resume")
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(raw, &res)
	if res["resumed"] != true || res["messages"] != float64(2) {
		t.Fatalf("reika.resume = %v, want the previous session's 2 messages", res)
	}
	from = e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "the second question"}); err != nil {
		t.Fatal(err)
	}
	e.WaitRunEnd(from)
	reqs := e.Engine.Requests()
	last := string(reqs[len(reqs)-1].Body)
	for _, want := range []string{"the first question", "the first answer", "the second question"} {
		if !strings.Contains(last, want) {
			t.Errorf("the request after resuming lacks %q", want)
		}
	}
}
