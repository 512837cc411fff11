package agent

import (
	"context"
	"github.com/reika-lsp/reika/contextwin"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/agenttest"
	"github.com/reika-lsp/reika/agent/sim"
)

func TestActivity(t *testing.T) {
	for _, tt := range []struct {
		tokens, written int
		began           bool
		d               time.Duration
		want            string
	}{
		{12345, 0, false, 4 * time.Second, "engine reading about 12k tokens, 4 s"},
		{950, 0, false, 3 * time.Second, "engine reading about 950 tokens, 3 s"},
		{12345, 310, true, 6500 * time.Millisecond, "engine writing, about 310 tokens, 6 s"},
	} {
		if got := activity(tt.tokens, tt.written, tt.began, tt.d); got != tt.want {
			t.Errorf("activity(%d, %d, %v, %v) = %q, want %q", tt.tokens, tt.written, tt.began, tt.d, got, tt.want)
		}
	}
}

// While the engine reads the prompt, the run says so with the prompt's
// size and the seconds, every activityEvery.
func TestActivityIsReported(t *testing.T) {
	activityEvery, quietTick = 100*time.Millisecond, 10*time.Millisecond
	t.Cleanup(func() { activityEvery, quietTick = 3*time.Second, time.Second })
	_, client := simEngine(t, sim.Config{Ctx: 8192, Script: []sim.Turn{{Content: "late", Fault: &sim.Fault{Latency: 450 * time.Millisecond}}}})
	s, _ := newSession(sessionConfig{Engine: client, Tools: &agenttest.Toolbox{Names: []string{"read"}}, Context: contextwin.Config{Window: 8192}})
	var c collect
	if res, err := s.Run(context.Background(), "x", c.add); err != nil || res.End != Answered {
		t.Fatalf("Run = %s, %v", res.End, err)
	}
	acts := c.texts(Activity)
	if len(acts) < 2 || !strings.HasPrefix(acts[0], "engine reading about ") {
		t.Errorf("activity events = %q, want at least two, the first about the prompt being read", acts)
	}
}
