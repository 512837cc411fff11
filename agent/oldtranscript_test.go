package agent

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/agenttest"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/contextwin"
)

// A transcript written before the planner's enums were stored as text —
// payload kinds as integers ("kind":1), plan events and usage events as
// display names ("emergency fold") — resumes as it did: the replay plans
// what the recording planned, and the request it rebuilds is byte for
// byte the one the recorded session sent last (testdata/transcript-v1.prompt).
// TestGenerateOldTranscript wrote both files with that version.
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
	s, err := NewSession(Config{Engine: client, Tools: &agenttest.Toolbox{Names: []string{"read"}}, Window: 64000, Resume: path})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasSuffix(s.resumed, "the next request continues the last one") {
		t.Errorf("resumed: %s; want a replay that plans as the recording did", s.resumed)
	}
	if !bytes.Equal(s.prev, want) {
		t.Errorf("the rebuilt last request differs from the one sent (%d bytes, want %d)", len(s.prev), len(want))
	}
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
	if !bytes.HasPrefix(s.prev, want) {
		t.Errorf("the resumed run's request does not continue the last one sent")
	}
}
