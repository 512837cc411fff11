package agent

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/engine/llamatest"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/contextwin"
	"github.com/reika-lsp/reika/internal/testslow"
)

// A user who pastes ~1.9 KB of CI output at every ask, 30 asks under the
// build tag long (12 by default, which fill the window and fold), in a
// 16k window of a real llama-server (llamatest: Debian's build over a tiny
// model that spends a token per byte, so each paste is ~1.9k tokens),
// the replies taken from the simulator through llamatest's proxy. Every
// ask is answered: the recap carries the older pastes shortened, with
// their facts and where their full text is, and the engine never refuses
// a request for good. (Carried whole, as they were, the asks stopped with
// "window too small" after the window filled.)
func TestPastedLogsOnRealLlamaServer(t *testing.T) {
	const window = 16384
	asks := 12
	if testslow.Long {
		asks = 30
	}
	real := llamatest.Start(t, llamatest.Options{Ctx: window, Model: llamatest.TinySWAModel})
	_, opts := simServer(t, sim.Config{Ctx: window})
	proxy := llamatest.StartProxy(t, real.URL, strings.TrimSuffix(opts.BaseURL, "/v1"))
	opts.BaseURL = proxy.URL + "/v1"
	spill := t.TempDir()
	ts, err := tools.New(tools.Config{Folders: []string{t.TempDir()}, SpillDir: spill})
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSession(sessionConfig{Engine: engine.NewClient(opts), Tools: ts, Context: contextwin.Config{Window: window}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testslow.Scale(150*time.Second))
	defer cancel()
	start := time.Now()
	for i := range asks {
		res, err := s.Run(ctx, pastedLog(i), func(Event) {})
		if err != nil || res.End != Answered {
			t.Fatalf("ask %d of %d ended %v: %v (%v)", i+1, asks, res.End, res.Err, err)
		}
	}
	refused, prefilled := 0, 0
	for _, x := range proxy.Exchanges() {
		if x.Status != 200 {
			refused++
		}
		prefilled += x.PromptN
	}
	files, _ := os.ReadDir(spill)
	if len(files) != asks {
		t.Errorf("%d pastes saved where the model can read them back, want %d", len(files), asks)
	}
	t.Logf("%d asks answered in %v: %d requests, %d refused, %d tokens prefilled",
		asks, time.Since(start).Round(time.Millisecond), len(proxy.Exchanges()), refused, prefilled)
}

// pastedLog is ask i: a question and ~1.9 KB of a failing CI run.
func pastedLog(i int) string {
	rng := rand.New(rand.NewPCG(uint64(i), 7))
	var b strings.Builder
	fmt.Fprintf(&b, "CI run %d failed again, what is wrong?\n", i)
	for j := 0; b.Len() < 1850; j++ {
		fmt.Fprintf(&b, "=== RUN   TestHandler/case_%d_%d\n    handler_test.go:%d: got %d, want %d\n", i, j, 40+j, rng.IntN(100), rng.IntN(100))
	}
	fmt.Fprintf(&b, "FACT run_%d: exit %d\n--- FAIL: TestHandler (0.%02ds)\nFAIL", i, 100+i, i)
	return b.String()
}
