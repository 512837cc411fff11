package acp

import (
	"fmt"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reika-lsp/reika/agent/sim"
)

// A shrink of the conversation (old results shed, turns folded) is a
// compaction_update where the client offers it — in progress, then
// completed with one line saying what was done — and a completed step
// where it does not.
func TestCompactionShown(t *testing.T) {
	for _, offers := range []bool{true, false} {
		t.Run(fmt.Sprintf("offered=%v", offers), func(t *testing.T) {
			files := map[string]string{}
			var script []sim.Turn
			for i := 0; i < 8; i++ {
				var b strings.Builder
				for l := 1; l <= 60; l++ {
					fmt.Fprintf(&b, "build a%d step %d: compiled package pkg%d in %dms without warnings\n", i, l, l, 100+l*7%90)
				}
				files[fmt.Sprintf("logs/a%d.log", i)] = b.String()
				script = append(script, sim.Turn{Content: fmt.Sprintf("Reading log a%d.", i),
					ToolCalls: []sim.ScriptCall{{Name: "read", Arguments: []byte(fmt.Sprintf(`{"path":"logs/a%d.log"}`, i))}}})
			}
			script = append(script, sim.Turn{Content: "They passed."})
			w := newWorld(t, sim.Config{Ctx: 8192, Script: script}, files)
			c := &client{compaction: offers}
			cn := w.connect(c)
			id := cn.newSession(t, w.ws)
			if res, err := cn.prompt(t, id, "Read the a logs one by one."); err != nil || res.StopReason != sdk.StopReasonEndTurn {
				t.Fatalf("prompt = %+v, %v", res, err)
			}
			var steps []string
			for _, tc := range c.matching("tool_call") {
				if title, _ := tc["title"].(string); strings.HasPrefix(title, "Reika replaced") || strings.HasPrefix(title, "Reika folded") {
					steps = append(steps, title)
				}
			}
			updates := c.rawMatching("compaction_update")
			if !offers {
				if len(updates) != 0 || len(steps) == 0 {
					t.Fatalf("a client without compaction got %d compaction updates and the steps %q, want steps only", len(updates), steps)
				}
				return
			}
			if len(updates) == 0 || len(steps) != 0 {
				t.Fatalf("a client with compaction got %d compaction updates and the steps %q, want updates only", len(updates), steps)
			}
			for i := 0; i+1 < len(updates); i += 2 {
				start, end := updates[i], updates[i+1]
				if start["compactionId"] != end["compactionId"] || start["status"] != "in_progress" || end["status"] != "completed" {
					t.Fatalf("the updates %v then %v, want one compaction in progress then completed", start, end)
				}
				summary, _ := end["summary"].([]any)
				text := ""
				if len(summary) == 1 {
					text, _ = summary[0].(map[string]any)["text"].(string)
				}
				if !strings.HasPrefix(text, "Reika replaced") && !strings.HasPrefix(text, "Reika folded") {
					t.Errorf("the compaction's summary is %v, want one line saying what was done", summary)
				}
				t.Logf("%s", text)
			}
			if len(updates)%2 != 0 {
				t.Errorf("%d compaction updates, want pairs", len(updates))
			}
		})
	}
}
