package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/replay"
)

// The routing table shows each session's reuse and the mean loss against
// the single engine in points.
func TestPrintRouting(t *testing.T) {
	alone := []replay.Reuse{{Session: "a", Prompt: 100, Cached: 90, Prefilled: 10}, {Session: "b", Prompt: 100, Cached: 80, Prefilled: 20}}
	rr := []replay.Reuse{{Session: "a", Prompt: 100, Cached: 30, Prefilled: 70}, {Session: "b", Prompt: 100, Cached: 40, Prefilled: 60, Stalled: 7}}
	var b bytes.Buffer
	printRouting(&b, []replay.RoutingRow{{Route: "single engine", SessionID: true, Sessions: alone}, {Route: "round-robin", Sessions: rr}}, "title")
	words := strings.Join(strings.Fields(b.String()), " ")
	for _, want := range []string{"route session id a b loss vs alone", "single engine - 90.0% (10) 80.0% (20) -",
		"round-robin not sent 30.0% (70) 40.0% (60, stalled at 7) 50.0 points"} {
		if !strings.Contains(words, want) {
			t.Errorf("printRouting printed\n%s\nwant %q", b.String(), want)
		}
	}
}
