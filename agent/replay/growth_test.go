package replay

import (
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/contextwin"
)

// A recording's call ids repeat over hundreds of rounds: a result's growth
// is counted from the message that carries it, not from an older result
// that answered a call of the same id.
func TestGrowthOfAResultWhoseCallIDRepeats(t *testing.T) {
	fresh := contextwin.Message{Role: contextwin.Tool, ToolCallID: "call_r39_0", Content: strings.Repeat("server.go:28:\tchatSeq int\n", 12)}
	old := engine.Message{Role: "tool", ToolCallID: "call_r39_0", Content: "Wrote 32 lines."}
	req := engine.Request{Messages: []engine.Message{{Role: "user", Content: "task"}, old, {Role: "assistant", Content: "next"}, toEngine(fresh)}}
	m := &meter{fresh: []contextwin.Message{fresh}, counted: map[int]int{}}
	got := m.growth(req)
	if want := blockTokens(toEngine(fresh)) + endTokens + genPrompt; got != want {
		t.Errorf("growth = %d, want the fresh result's %d tokens and the markers (the older result of the same id has %d)", got, want, blockTokens(old))
	}
}
