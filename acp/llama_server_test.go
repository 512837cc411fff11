package acp

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reika-lsp/reika/agent/engine/llamatest"
	"github.com/reika-lsp/reika/agent/sim"
)

// TestRealLlamaServer: appends stay appends through this front end on a
// real llama-server (a tiny dense model; the replies are the simulator's,
// the prefill figures the engine's, through llamatest's proxy): two
// prompts of reads, and every request that extends the one before is
// reused by the engine's prompt cache to the token; the others are
// shrinks (fewer messages: a fold after its note round).
func TestRealLlamaServer(t *testing.T) {
	const n = 12
	real := llamatest.Start(t, llamatest.Options{Ctx: 8192, Model: llamatest.TinyModel})
	files := map[string]string{}
	var script []sim.Turn
	for prompt := range 2 {
		for i := range n {
			name := fmt.Sprintf("logs/p%d-%d.log", prompt, i)
			var b strings.Builder
			for l := 1; l <= 12; l++ {
				fmt.Fprintf(&b, "build %d-%d step %d: compiled pkg%d in %dms\n", prompt, i, l, l, 100+l*7%90)
			}
			files[name] = b.String()
			script = append(script, sim.Turn{Content: "Reading " + name + ".",
				ToolCalls: []sim.ScriptCall{{Name: "read", Arguments: json.RawMessage(fmt.Sprintf(`{"path":%q}`, name))}}})
		}
		script = append(script, sim.Turn{Content: "Every build passed."})
	}
	w := newWorld(t, sim.Config{Ctx: 8192, Script: script}, files)
	proxy := llamatest.StartProxy(t, real.URL, w.http.URL)
	w.env["REIKA_ENDPOINT"] = proxy.URL + "/v1"
	w.env["REIKA_CONTEXT_WINDOW"] = "8192"
	// The server's context and the client's calls share the deadline
	// (they did not: the server's ended at 60 s, under load before the
	// prompts did).
	w.limit = 240 * time.Second
	cn := w.connect(&client{})
	id := cn.newSession(t, w.ws)
	for prompt := range 2 {
		res, err := cn.prompt(t, id, fmt.Sprintf("Read the logs logs/p%d-*.log one by one and tell me whether they passed.", prompt))
		if err != nil || res.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("prompt %d = %+v, %v", prompt, res, err)
		}
	}
	xs := proxy.Exchanges()
	var prev *llamatest.Exchange
	appends, others, prefilled, reused := 0, 0, 0, 0
	for i := range xs {
		x := &xs[i]
		if x.Status != 200 {
			t.Errorf("request #%d: status %d %s", x.Seq, x.Status, x.Error)
			continue
		}
		prefilled += x.PromptN
		reused += x.CacheN
		if prev != nil {
			a, b := messagesOf(t, prev.Body), messagesOf(t, x.Body)
			if len(b) > len(a) && reflect.DeepEqual(b[:len(a)], a) {
				appends++
				if x.CacheN != prev.PromptTokens {
					t.Errorf("request #%d appends to #%d (%d tokens) but the engine reused %d of them", x.Seq, prev.Seq, prev.PromptTokens, x.CacheN)
				}
			} else {
				others++
				if len(b) > len(a) {
					t.Errorf("request #%d carries more messages than #%d but does not extend it: an append that changed the past", x.Seq, prev.Seq)
				}
				t.Logf("request #%d (%d messages, %d tokens) does not extend #%d (%d messages): the engine restarted at %d", x.Seq, len(b), x.PromptTokens, prev.Seq, len(a), x.CacheN)
			}
		}
		prev = x
	}
	if appends < 2*n {
		t.Errorf("%d appends of %d requests, want at least %d", appends, len(xs), 2*n)
	}
	t.Logf("%d requests: %d appends (each reused to the token), %d others; %d tokens prefilled, %d reused from the cache (%.0f%%)",
		len(xs), appends, others, prefilled, reused, 100*float64(reused)/float64(prefilled+reused))
}
