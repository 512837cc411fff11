package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/contextwin"
)

// lostSession is a small hand-built session: round 1 reads a.go whole,
// round 2 edits b.go, round 3 edits a.go, round 4 reads lines 3–4 of a.go,
// round 5 reads a.go whole again, round 6 edits a.go and answers.
func lostSession() *Recording {
	aText := strings.Repeat("line of a.go that matters\n", 6)
	numbered := ""
	for i, l := range strings.Split(strings.TrimSuffix(aText, "\n"), "\n") {
		numbered += fmt.Sprintf("%6d\t%s\n", i+1, l)
	}
	read := func(id string, from, to int) contextwin.Message {
		return contextwin.Message{Role: contextwin.Tool, ToolCallID: id, Content: numbered,
			Payload: contextwin.Payload{Kind: contextwin.Read, Path: "a.go", From: from, To: to, Total: 6}}
	}
	call := func(id, name, args string) contextwin.Message {
		return contextwin.Message{Role: contextwin.Assistant, Content: "working", ToolCalls: []contextwin.ToolCall{{ID: id, Name: name, Arguments: args}}}
	}
	diff := func(id, path string) contextwin.Message {
		return contextwin.Message{Role: contextwin.Tool, ToolCallID: id, Content: "--- a/" + path + "\n+++ b/" + path + "\n",
			Payload: contextwin.Payload{Kind: contextwin.Diff, Path: path}}
	}
	obj := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	tools := []engine.Tool{{Name: "read", Description: "read a file", Parameters: obj}, {Name: "edit", Description: "edit a file", Parameters: obj}}
	return &Recording{Name: "lost", System: "You are a test. The repo has a.go and b.go.", Tools: tools, Rounds: []Round{
		{User: "Fix a.go.", Assistant: call("c1", "read", `{"path":"a.go"}`), Results: []contextwin.Message{read("c1", 1, 6)}},
		{Assistant: call("c2", "edit", `{"path":"b.go","old_text":"x","new_text":"y"}`), Results: []contextwin.Message{diff("c2", "b.go")}},
		{Assistant: call("c3", "edit", `{"path":"a.go","old_text":"x","new_text":"y"}`), Results: []contextwin.Message{diff("c3", "a.go")}},
		{Assistant: call("c4", "read", `{"path":"a.go","offset":3,"limit":2}`), Results: []contextwin.Message{read("c4", 3, 4)}},
		{Assistant: call("c5", "read", `{"path":"a.go"}`), Results: []contextwin.Message{read("c5", 1, 6)}},
		{Assistant: contextwin.Message{Role: contextwin.Assistant, Content: "Done."}},
	}}
}

// request is a turn request of the system prompt and msgs.
func request(s *Recording, msgs ...engine.Message) engine.Request {
	return engine.Request{Messages: append([]engine.Message{{Role: "system", Content: s.System}}, msgs...)}
}

func recorded(s *Recording, rounds ...int) []engine.Message {
	var out []engine.Message
	for _, n := range rounds {
		for _, m := range s.Rounds[n-1].Messages() {
			out = append(out, toEngine(Cut(m)))
		}
	}
	return out
}

// A round that uses a file whose newest read the request lost counts one
// re-read, priced at the read's tokens, once until the next event; a round
// that reads the same lines again anyway, or a request that still holds
// the read, counts none.
func TestReReadsCountWhatTheRequestLost(t *testing.T) {
	s := lostSession()
	l := newLosses(s)
	recap := engine.Message{Role: "user", Content: "Recap: you read a.go and edited b.go."}
	l.turn(1, request(s, recorded(s, 1)[:1]...), true)
	l.turn(2, request(s, recorded(s, 1)...), true)                                     // holds the read: round 2 edits b.go, never read
	l.turn(3, request(s, recap), false)                                                // the read folded away: round 3 edits a.go
	l.turn(3, request(s, recap), true)                                                 // a retry of the same round counts nothing more
	l.turn(4, request(s, append([]engine.Message{recap}, recorded(s, 3)...)...), true) // re-read until the next event
	l.turn(5, request(s, recap), false)                                                // round 5 reads a.go whole: the recording re-reads
	l.turn(6, request(s, recap), false)                                                // round 6 answers: it uses no file
	got := l.result(request(s, recap))
	r := s.Rounds[0].Results[0]
	if want := blockTokens(toEngine(Cut(r))); got.ReReads != 1 || got.ReReadTokens != want {
		t.Errorf("ReReads, ReReadTokens = %d, %d; want 1, %d (the read of round 1 once)", got.ReReads, got.ReReadTokens, want)
	}

	// Round 4 after an event that lost the whole read of round 1: it reads
	// lines 3–4 only, which do not cover it, so it counts.
	l = newLosses(s)
	l.turn(1, request(s, recorded(s, 1)[:1]...), true)
	l.turn(4, request(s, recap), false)
	if got := l.result(request(s, recap)); got.ReReads != 1 {
		t.Errorf("a ranged read after the whole read was lost: ReReads = %d, want 1", got.ReReads)
	}
}

// The trail counts, per turn request, the files changed before its round
// and whether the request names them outside the system prompt.
func TestTrailCountsChangedFilesNamed(t *testing.T) {
	s := lostSession()
	l := newLosses(s)
	l.turn(1, request(s, recorded(s, 1)[:1]...), true)                                         // nothing changed yet
	l.turn(2, request(s, recorded(s, 1)...), true)                                             // nothing changed before round 2
	l.turn(3, request(s, recorded(s, 1, 2)...), true)                                          // b.go named: 1 of 1
	l.turn(4, request(s, engine.Message{Role: "user", Content: "Recap."}), false)              // b.go and a.go lost: 0 of 2
	l.turn(5, request(s, engine.Message{Role: "user", Content: "Recap: edited a.go."}), false) // 1 of 2
	last := request(s, engine.Message{Role: "user", Content: "Recap: edited a.go."}, engine.Message{Role: "user", Content: "b.go too"})
	l.turn(6, last, true) // the new message names b.go: 2 of 2
	got := l.result(last)
	if got.Trail != round(4.0/7, 3) || got.TrailWorst != 0 || got.TrailLast != 1 {
		t.Errorf("Trail, TrailWorst, TrailLast = %v, %v, %v; want 4 of 7 pairs = 0.571, 0, 1", got.Trail, got.TrailWorst, got.TrailLast)
	}
}

// A note's findings are its lines, values and listed items; the measure
// wants the newest value of a key, and counts the notes half of whose
// findings reached a later request.
func TestNoteSurvival(t *testing.T) {
	s := lostSession()
	l := newLosses(s)
	l.turn(1, request(s, recorded(s, 1)[:1]...), true)
	l.note(2, "Progress note.\n- issue: X-1\n- files read (2): a.go, b.go\n")
	l.turn(2, request(s, engine.Message{Role: "user", Content: "Recap: X-1, a.go, b.go"}), false)
	l.note(3, "Facts to keep:\n- issue: X-2\n")
	l.turn(3, request(s, engine.Message{Role: "user", Content: "Recap: X-2, a.go"}), false)
	l.note(4, "- branch: never-seen-anywhere\n")
	l.note(4, "- files read (4): p.go, q.go, r.go, a.go\n")
	last := request(s, engine.Message{Role: "user", Content: "Recap: X-2, a.go"})
	l.turn(4, last, true)
	l.note(5, "- owner: after the last request\n")
	got := l.result(last)
	// Note 1: "Progress note.", a.go, b.go (its X-1 superseded): 1 of 3;
	// it reached round 2's request (3 of its 4 findings). Note 2: X-2, 1 of
	// 1. Note 3: 0 of 1, never reached. Note 4: a.go, 1 of 4, under half:
	// not reached. Note 5 came after the last request.
	if want := round((1.0/3+1+0+0.25)/4, 3); got.Notes != 4 || got.NotesKept != want || got.NotesReached != 0.5 {
		t.Errorf("Notes, NotesKept, NotesReached = %d, %v, %v; want 4, %v, 0.5", got.Notes, got.NotesKept, got.NotesReached, want)
	}
	// A line without a key is stated anew by one that differs only in its
	// numbers; one that says there are none of a list, by that list.
	l = newLosses(s)
	l.turn(1, request(s, recorded(s, 1)[:1]...), true)
	l.note(2, "Progress note after 9 tool rounds.\n- no edits made\n- The lexer fails.\n")
	l.note(3, "Progress note after 17 tool rounds.\n- edits made (1): a.go\n- The parser fails.\n")
	last = request(s, engine.Message{Role: "user", Content: "Recap: Progress note after 17 tool rounds. The lexer fails. The parser fails. edits made a.go"})
	l.turn(4, last, true)
	// Note 1: "The lexer fails.", 1 of 1 (its title and "no edits made"
	// stated anew by note 2); note 2: 3 of 3.
	if got := l.result(last); got.NotesKept != 1 {
		t.Errorf("NotesKept = %v, want 1: a later note's title and list state the earlier ones anew", got.NotesKept)
	}
	f := findings("Progress note after 12 tool rounds.\nEstablished so far:\n- files read (3): a.go, b.go and 1 more\n- issue: X-1\n")
	want := []finding{{text: "Progress note after 12 tool rounds."}, {key: "files read", text: "a.go", list: true},
		{key: "files read", text: "b.go", list: true}, {key: "issue", text: "X-1"}}
	if fmt.Sprint(f) != fmt.Sprint(want) {
		t.Errorf("findings = %v, want %v", f, want)
	}
}

// The measures reach the row, on every strategy: in a window that holds
// the whole session nothing is re-read and every changed file is named;
// a superseded fact is not wanted.
func TestRowCarriesLosses(t *testing.T) {
	s := lostSession()
	s.Facts = []Fact{{Key: "k", Value: "old-value-17", Round: 1}, {Key: "k", Value: "Fix a.go", Round: 1}}
	for _, name := range []string{"ours", "sliding"} {
		res, err := Replay(context.Background(), s, 32000, name)
		if err != nil {
			t.Fatal(err)
		}
		r := res.Row
		if r.ReReads != 0 || r.Trail != 1 || r.TrailLast != 1 || r.FactsKept != 1 {
			t.Errorf("%s at 32k: rereads %d, trail %v, trail_last %v, facts %v; want 0, 1, 1, 1 (the newest value of k kept)",
				name, r.ReReads, r.Trail, r.TrailLast, r.FactsKept)
		}
	}
}
