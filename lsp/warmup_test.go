package lsp_test

import (
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/internal/testslow"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

// The warm-up starts at the first open document, before any ask, and
// never overlaps a request: an ask that comes while the warm-up is at the
// engine waits for it, and an ask that comes before it was sent cancels
// it. When the ask waited, its request is a cache hit on the warm-up's
// prefix.
func TestWarmupNeverOverlapsARequest(t *testing.T) {
	for _, tc := range []struct {
		name       string
		waitArrive bool // ask once the warm-up is at the engine
	}{
		{"ask while the warm-up is at the engine", true},
		{"ask at once", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := lsptest.Start(t, lsptest.Config{
				Caps:  lsptest.Full(),
				Files: map[string]string{"main.go": "package main\n\n// Hello greets.\nfunc Hello() string { return \"hi\" }\n\nfunc main() { println(Hello()) }\n"},
				Env:   map[string]string{"REIKA_WARMUP": "1"},
				// Prefill is slow enough that the warm-up is at the engine
				// for a while (the prefix is about 1500 tokens).
				Engine: sim.Config{Realtime: true, PrefillMSPerToken: 0.6,
					Script: []sim.Turn{{Content: "warm"}, {Content: "main prints hi."}}},
			})
			e.Open("main.go")
			if tc.waitArrive {
				deadline := time.Now().Add(testslow.Scale(lsptest.DefaultTimeout))
				for e.Engine.Arrived() == 0 {
					if time.Now().After(deadline) {
						t.Fatalf("no warm-up reached the engine after the first open document\n%s", e.Dump())
					}
					time.Sleep(time.Millisecond)
				}
			}
			asked := time.Now()
			from := e.Mark()
			if _, err := e.Exec("reika.ask", map[string]any{"instruction": "What does main do?"}); err != nil {
				t.Fatal(err)
			}
			e.WaitRunEnd(from)
			spans := e.Engine.Spans()
			for i := 1; i < len(spans); i++ {
				if spans[i].Arrived.Before(spans[i-1].Ended) {
					t.Errorf("request %d arrived %v before request %d ended: two requests at once", i+1, spans[i-1].Ended.Sub(spans[i].Arrived), i)
				}
			}
			reqs := e.Engine.Requests()
			if !tc.waitArrive {
				t.Logf("%d requests (the warm-up was cancelled before it was sent, or waited for)", len(reqs))
				return
			}
			if len(reqs) != 2 || reqs[0].MaxTokens != 1 {
				t.Fatalf("requests = %d, the first with max_tokens %d; want the warm-up (max_tokens 1) and the ask", len(reqs), reqs[0].MaxTokens)
			}
			if !asked.Before(spans[0].Ended) {
				t.Fatalf("the warm-up ended before the ask: this run tested nothing")
			}
			if reqs[1].CacheN < reqs[0].PromptTokens-8 {
				t.Errorf("the first ask reused %d tokens of the %d-token warm-up", reqs[1].CacheN, reqs[0].PromptTokens)
			}
		})
	}
}
