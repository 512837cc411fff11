package agent

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/agenttest"
	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/contextwin"
)

func TestGenerateOldTranscript(t *testing.T) {
	out := os.Getenv("REIKA_GEN_OLD_TRANSCRIPT")
	if out == "" {
		t.Skip("set REIKA_GEN_OLD_TRANSCRIPT to a path")
	}
	srv, client := simEngine(t, sim.Config{Ctx: 4096})
	var turns []sim.Turn
	for i := 0; i < 16; i++ {
		turns = append(turns, readTurn(fmt.Sprintf("f%d.go", i)))
	}
	srv.AppendScript(append(turns, sim.Turn{Content: "done"})...)
	big := strings.Repeat("\tvalue = compute(value, 1)\n", 40)
	kinds := []contextwin.Kind{contextwin.Read, contextwin.Search, contextwin.Command, contextwin.Diff, contextwin.Other}
	n := 0
	box := &agenttest.Toolbox{Names: []string{"read"}, Answer: func(c engine.ToolCall) tools.Result {
		k := kinds[n%len(kinds)]
		n++
		return tools.Result{Content: big, Payload: contextwin.Payload{Kind: k, Path: "f.go", From: 1, To: 40, Total: 40}}
	}}
	dir := t.TempDir()
	s, err := newSession(sessionConfig{Engine: client, Tools: box, TranscriptDir: dir, Context: contextwin.Config{Window: 64000}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), "read them all", nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	data, err := os.ReadFile(s.TranscriptPath())
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(out, data, 0o644)
	os.WriteFile(strings.TrimSuffix(out, ".jsonl")+".prompt", s.prev, 0o644)
}
