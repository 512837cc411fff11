package transcript

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/reika-lsp/reika/contextwin"
)

func TestWriteAndResume(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, Meta{Workspace: "/ws", Window: 16384})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []Message{
		{Role: "user", Content: "fix it"},
		{Role: "assistant", Reasoning: "think", ToolCalls: []ToolCall{{ID: "c1", Name: "read", Arguments: `{"path":"a.go"}`}}},
		{Role: "tool", ToolCallID: "c1", Content: "1\tpackage a\n", Payload: contextwin.Payload{Kind: contextwin.Read, Path: "a.go", From: 1, To: 1, Total: 1}},
	}
	for i := range msgs {
		if err := w.Append(Record{Kind: KindMessage, Message: &msgs[i]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	w2, recs, err := Open(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	if w2.ID() != w.ID() || len(recs) != 4 || recs[0].Meta.Window != 16384 {
		t.Fatalf("Open() = id %q, %d records; want id %q and 4 records", w2.ID(), len(recs), w.ID())
	}
	var got []Message
	for _, r := range recs[1:] {
		got = append(got, *r.Message)
	}
	if d := cmp.Diff(msgs, got, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("messages after a round trip differ (-want +got):\n%s", d)
	}
	w2.Append(Record{Kind: KindNote, Text: "decision: x"})
	w2.Close()
	if recs, _ := Load(w.Path()); len(recs) != 5 || recs[4].Text != "decision: x" {
		t.Errorf("after appending through the reopened writer: %d records", len(recs))
	}
	if got := Latest(dir, "/ws"); got != w.Path() {
		t.Errorf("Latest = %q, want %q", got, w.Path())
	}
	if got := Latest(dir, "/ws", w.Path()); got != "" {
		t.Errorf("Latest skipping the only transcript = %q, want none", got)
	}
	empty, _ := Create(dir, Meta{ID: "99999999-999999-ffffff", Workspace: "/ws"})
	empty.Close()
	if got := Latest(dir, "/ws"); got != w.Path() {
		t.Errorf("Latest = %q, want %q: a newer transcript without messages is not a session to resume", got, w.Path())
	}
	if got := Latest(dir, "/other"); got != "" {
		t.Errorf("Latest for another workspace = %q, want none", got)
	}
}

// A crash may cut the last line short: it is dropped, the rest loads. A
// damaged line in the middle is an error naming it.
func TestLoadAfterACrash(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	good := `{"kind":"meta","at":"2026-01-01T00:00:00Z","meta":{"id":"s"}}` + "\n" + `{"kind":"message","at":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}` + "\n"
	os.WriteFile(p, []byte(good+`{"kind":"message","at":"2026-01-01T00:00:00Z","mess`), 0o600)
	recs, err := Load(p)
	if err != nil || len(recs) != 2 {
		t.Errorf("Load(cut last line) = %d records, %v; want 2, nil", len(recs), err)
	}
	os.WriteFile(p, []byte(good+"garbage\n"+good), 0o600)
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("Load(damaged middle line) error = %v, want one naming line 3", err)
	}
}

func TestDir(t *testing.T) {
	if got := Dir(func(k string) string { return map[string]string{"XDG_STATE_HOME": "/st"}[k] }); got != "/st/reika/sessions" {
		t.Errorf("Dir = %q, want /st/reika/sessions", got)
	}
}

func TestMarkdown(t *testing.T) {
	recs, err := Parse([]byte(`{"kind":"meta","at":"2026-01-01T10:00:00Z","meta":{"id":"s1","workspace":"/ws","model":"m","endpoint":"http://x/v1","window":8192}}
{"kind":"message","at":"2026-01-01T10:00:01Z","message":{"role":"user","content":"fix it"}}
{"kind":"message","at":"2026-01-01T10:00:02Z","message":{"role":"assistant","reasoning":"think","tool_calls":[{"id":"c1","name":"read","arguments":"{\"path\":\"a.go\"}"}]}}
{"kind":"message","at":"2026-01-01T10:00:03Z","message":{"role":"tool","tool_call_id":"c1","content":"x := ` + "```" + `\n","payload":{"kind":1,"path":"a.go"}}}
{"kind":"note","at":"2026-01-01T10:00:04Z","text":"decision: keep it"}
{"kind":"event","at":"2026-01-01T10:00:05Z","text":"fold: shed 2 results, folded 4 messages"}
`))
	if err != nil {
		t.Fatal(err)
	}
	md := Markdown(recs)
	for _, want := range []string{"# Reika session s1", "## You (10:00:01)\n\nfix it", "**read** `{\"path\":\"a.go\"}`", "result: a.go", "````\n", "> decision: keep it", "*10:00:05 — fold"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}

// A plan record's event reads from either format: the Plan of this
// version, or the display text of the transcripts written before it.
func TestPlanEvent(t *testing.T) {
	recs, err := Parse([]byte(`{"kind":"plan","at":"2026-01-01T10:00:00Z","text":"emergency fold"}
{"kind":"plan","at":"2026-01-01T10:00:01Z","text":"fold"}
{"kind":"plan","at":"2026-01-01T10:00:02Z","plan":{"event":"emergency"}}
{"kind":"plan","at":"2026-01-01T10:00:03Z","plan":{"event":"append"}}
{"kind":"usage","at":"2026-01-01T10:00:04Z","usage":{"prompt_tokens":1,"completion_tokens":1,"cached_tokens":0,"event":"emergency fold"}}
`))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []contextwin.Event{contextwin.Emergency, contextwin.Fold, contextwin.Emergency, contextwin.Append} {
		if got, err := recs[i].PlanEvent(); err != nil || got != want {
			t.Errorf("record %d: PlanEvent = %v, %v; want %v", i+1, got, err, want)
		}
	}
	if u := recs[4].Usage; u.Event == nil || *u.Event != contextwin.Emergency {
		t.Errorf("usage event = %v, want the emergency", u.Event)
	}
	if _, err := (Record{Kind: KindPlan, Text: "sideways"}).PlanEvent(); err == nil {
		t.Errorf("PlanEvent(sideways) gave an event")
	}
}
