package agent

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/engine/llamatest"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/contextwin"
	"github.com/reika-lsp/reika/internal/testslow"
)

// TestSubagentOnRealLlamaServer: a real llama-server, the replies the
// simulator's through llamatest's proxy. With two slots (-np 2, each the
// session's window) the subagent takes the slot the session does not pin,
// and the session's request after its report reuses the session's whole
// previous prompt (cache_n), even with no copies of prompts in host memory
// (--cache-ram 0). With one slot the subagent's requests take the slot:
// without those copies the session's prompt is gone, with them (the
// default) llama-server restores it; either way the session learns which
// from cache_n.
func TestSubagentOnRealLlamaServer(t *testing.T) {
	const window = 16384
	for _, c := range []struct {
		name   string
		slots  int
		args   []string
		reused bool
	}{
		{"two slots, no prompt copies", 2, []string{"--cache-ram", "0"}, true},
		{"one slot, no prompt copies", 1, []string{"--cache-ram", "0"}, false},
		{"one slot, prompt copies in host memory", 1, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"-np", strconv.Itoa(c.slots)}, c.args...)
			real := llamatest.Start(t, llamatest.Options{Ctx: c.slots * window, Args: args})
			srv, opts := simServer(t, sim.Config{Ctx: window})
			srv.AppendScript(readTurn("a.go"), subagentCall("Find X", "where X is"), readTurn("b.go"),
				sim.Turn{Content: "X: b.go:3"}, sim.Turn{Content: "Done."})
			proxy := llamatest.StartProxy(t, real.URL, strings.TrimSuffix(opts.BaseURL, "/v1"))
			opts.BaseURL = proxy.URL + "/v1"
			s, err := newSession(sessionConfig{Engine: engine.NewClient(opts), Tools: readBox(20), Context: contextwin.Config{Window: window}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			s.slot = slotState{id: 0, pin: c.slots > 1, key: "session", opts: opts}
			ctx, cancel := context.WithTimeout(context.Background(), testslow.Scale(60*time.Second))
			defer cancel()
			if res, err := s.Run(ctx, "Where is X?", nil); err != nil || res.Answer != "Done." {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			x := proxy.Exchanges()
			if len(x) != 5 {
				t.Fatalf("%d requests, want 5 (2 of the session, 2 of the subagent, 1 of the session)", len(x))
			}
			before, child, after := x[1], x[2], x[4]
			if strings.Contains(string(before.Body), "You are a subagent") || !strings.Contains(string(child.Body), "You are a subagent") {
				t.Fatalf("the requests are not in the order the test expects")
			}
			if own := strings.Contains(string(child.Body), `"id_slot":1`); own != (c.slots > 1) {
				t.Errorf("the subagent's request names slot 1 = %v: %s", own, child.Body[:min(len(child.Body), 120)])
			}
			t.Logf("the session's request before the subagent %d tokens, the one after it reused %d of %d", before.PromptTokens, after.CacheN, after.PromptTokens)
			if reused := after.CacheN >= before.PromptTokens; reused != c.reused {
				t.Errorf("after the subagent the session reused %d tokens of its %d-token previous prompt: reused whole = %v, want %v", after.CacheN, before.PromptTokens, reused, c.reused)
			}
			if s.slotLoses == c.reused {
				t.Errorf("the session learnt that its slot loses its prompt = %v, want %v", s.slotLoses, !c.reused)
			}
		})
	}
}
