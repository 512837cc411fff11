package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reika-lsp/reika/agent/replay"
)

// The demo is the README's first command: a long session on this
// repository against the simulated engine, with sheds, folds and no
// overflow.
func TestDemo(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := runDemo(context.Background(), []string{"--root", "../.."}, &stdout, &stderr)
	out := stdout.String()
	if code != 0 {
		t.Fatalf("demo exit %d\n%s\n%s", code, out, stderr.String())
	}
	for _, want := range []string{"▸ shed", "▸ fold", "note:", "overflows         0", "rounds            16", "prefilled anew", "decoded", "engine time"} {
		if !strings.Contains(out, want) {
			t.Errorf("the demo's output lacks %q", want)
		}
	}
	// The engine time is the prefilled and decoded tokens at the default
	// speeds.
	var prefilled, decoded int
	var seconds float64
	for _, l := range strings.Split(out, "\n") {
		fmt.Sscanf(l, "prefilled anew %d", &prefilled)
		fmt.Sscanf(l, "decoded %d", &decoded)
		fmt.Sscanf(l, "engine time %fs", &seconds)
	}
	sp := replay.DefaultSpeeds
	if want := sp.Seconds(prefilled, decoded); prefilled == 0 || decoded == 0 || math.Abs(seconds-want) > 0.05 {
		t.Errorf("the demo said %d prefilled, %d decoded, engine time %.1fs; want both counted and %.1fs", prefilled, decoded, seconds, want)
	}
	if strings.Count(out, "\n") < 150 {
		t.Errorf("the demo printed %d lines, want a line per round of at least 150 rounds", strings.Count(out, "\n"))
	}
}

// The demo's summary is the same in every run of the same tree: the
// lower bound counts every request the engine received, after it has
// recorded the last (it did not always: 1.7× in some runs, 1.0× in the
// others), and the paths the model reads (the spill files') are of one
// length. Only the time taken and the engine's port may differ.
func TestDemoSummaryStable(t *testing.T) {
	summary := func() string {
		var stdout, stderr bytes.Buffer
		if code := runDemo(context.Background(), []string{"--root", "../..", "--rounds", "3"}, &stdout, &stderr); code != 0 || stderr.Len() > 0 {
			t.Fatalf("demo --rounds 3: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
		}
		var keep []string
		for _, l := range strings.Split(stdout.String(), "\n") {
			if !strings.HasPrefix(l, "took ") && !strings.HasPrefix(l, "reika demo: ") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	first := summary()
	if !strings.Contains(first, "against a lower bound of") {
		t.Fatalf("the demo prints no lower bound:\n%s", first)
	}
	for run := 2; run <= 3; run++ {
		if diff := cmp.Diff(first, summary()); diff != "" {
			t.Fatalf("run %d printed another summary than run 1 (-run 1 +run %d):\n%s", run, run, diff)
		}
	}
}

func TestDemoBadFlags(t *testing.T) {
	for _, args := range [][]string{{"--rounds", "0"}, {"--window", "10"}, {"--root", "/no/such/dir"}} {
		var stdout, stderr bytes.Buffer
		if code := runDemo(context.Background(), args, &stdout, &stderr); code == 0 || stderr.Len() == 0 {
			t.Errorf("demo %v = exit %d, stderr %q; want a failure with a message", args, code, stderr.String())
		}
	}
}
