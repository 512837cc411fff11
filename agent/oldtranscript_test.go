package agent

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/agenttest"
	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/contextwin"
)

// A transcript written before the planner's enums were stored as text —
// payload kinds as integers ("kind":1), plan events and usage events as
// display names ("emergency fold") — resumes as it did: the replay plans
// what the recording planned, and the request it rebuilds is byte for
// byte the one the recorded session sent last (testdata/transcript-v1.prompt)
// up to its recap, which this version renders.
// A test of commit f30b194 (TestGenerateOldTranscript, since removed: it
// would now write the new format) wrote both with that version.
func TestResumeTranscriptV1(t *testing.T) {
	data, err := os.ReadFile("testdata/transcript-v1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/transcript-v1.prompt")
	if err != nil {
		t.Fatal(err)
	}
	for _, old := range []string{`"payload":{"kind":1,`, `"kind":"plan","at":`, `"text":"fold"}`, `"event":"emergency fold"`} {
		if !bytes.Contains(data, []byte(old)) {
			t.Fatalf("the fixture holds no %s: it does not test the old format", old)
		}
	}
	path := filepath.Join(t.TempDir(), "old.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	srv, client := simEngine(t, sim.Config{Ctx: 4096})
	srv.AppendScript(sim.Turn{Content: "resumed answer"})
	s, err := newSession(sessionConfig{Engine: client, Tools: &agenttest.Toolbox{Names: []string{"read"}}, Resume: path, Context: contextwin.Config{Window: 64000}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(s.resumed, "the next request continues the last one") {
		t.Errorf("resumed: %s; want a replay that plans as the recording did", s.resumed)
	}
	// Up to the recap, the rebuilt request is the one sent byte for byte.
	// The recap itself is rendered by this version, which renders it
	// otherwise than the one that wrote the transcript: a resume across
	// such an upgrade prefills the request again from the recap on, once.
	recapAt := bytes.Index(want, []byte("Recap of earlier turns"))
	if recapAt < 0 {
		t.Fatal("the fixture's last request holds no recap")
	}
	if n := commonPrefixLen(s.prev, want); n < recapAt {
		t.Errorf("the rebuilt last request departs from the one sent at byte %d, before its recap (at %d)", n, recapAt)
	}
	rebuilt := bytes.Clone(s.prev)
	kinds := map[contextwin.Kind]int{}
	for _, m := range s.Messages() {
		if m.Role == contextwin.Tool {
			kinds[m.Payload.Kind]++
		}
	}
	for _, k := range []contextwin.Kind{contextwin.Read, contextwin.Diff, contextwin.Search, contextwin.Command, contextwin.Other} {
		if kinds[k] == 0 {
			t.Errorf("no %s result resumed: kinds %v", k, kinds)
		}
	}
	if _, err := s.Run(context.Background(), "go on", nil); err != nil {
		t.Fatal(err)
	}
	reqs := recorded(t, srv, 1)
	if len(reqs) == 0 || !bytes.Contains(reqs[len(reqs)-1].Body, []byte("go on")) {
		t.Fatalf("the resumed run sent no request with its instruction")
	}
	if !bytes.HasPrefix(s.prev, rebuilt) {
		t.Errorf("the resumed run's request does not continue the rebuilt last one")
	}
	// The transcript now holds both formats, and resumes again.
	last := s.prev
	s.Close()
	again, err := newSession(sessionConfig{Engine: client, Tools: &agenttest.Toolbox{Names: []string{"read"}}, Resume: path, Context: contextwin.Config{Window: 64000}})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if !strings.HasSuffix(again.resumed, "the next request continues the last one") || !bytes.Equal(again.prev, last) {
		t.Errorf("a transcript of both formats resumed: %s (%d bytes of the last request, want %d)", again.resumed, len(again.prev), len(last))
	}
}

// What a session appends to a transcript names its enums by identifier:
// the payload's kind, the plan's event, the usage's event.
func TestTranscriptWritesIdentifiers(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 8192})
	srv.AppendScript(readTurn("a.go"), sim.Turn{Content: "done"})
	box := &agenttest.Toolbox{Names: []string{"read"}, Answer: func(engine.ToolCall) tools.Result {
		return tools.Result{Content: "1\tpackage a\n", Payload: contextwin.Payload{Kind: contextwin.Read, Path: "a.go"}}
	}}
	s, err := newSession(sessionConfig{Engine: client, Tools: box, TranscriptDir: t.TempDir(), Context: contextwin.Config{Window: 8192}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), "read a.go", nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	data, err := os.ReadFile(s.TranscriptPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"payload":{"kind":"read","path":"a.go"}`, `"kind":"plan",`, `"plan":{"event":"append"}`, `"event":"append","finish_reason"`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("the transcript holds no %s:\n%s", want, data)
		}
	}
	if bytes.Contains(data, []byte(`"payload":{"kind":1`)) {
		t.Errorf("the transcript holds a kind as a number:\n%s", data)
	}
}

// commonPrefixLen is the length of the longest common prefix of a and b.
func commonPrefixLen(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
