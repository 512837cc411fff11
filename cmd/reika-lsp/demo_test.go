package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reika-lsp/reika/agent/replay"
	"github.com/reika-lsp/reika/internal/testslow"
	"github.com/reika-lsp/reika/repomap"
)

// demoRun is the demo that TestDemo checks and TestREADMECommands runs:
// the README's first command, 160 rounds in a 16k window (under the build
// tag long), or by default 50 rounds in a 12k window, which shed and fold
// as often in a fifth of the time. It runs once for both tests.
func demoRun(t *testing.T) (out string, rounds int) {
	t.Helper()
	if testing.Short() {
		t.Skip("the demo runs in the pass without the race detector (a minute under it)")
	}
	demoOnce.Do(func() {
		args := strings.Fields(strings.TrimPrefix(readmeCommands(t)[0], "go run ./cmd/reika-lsp "))
		demoRounds = 160
		if !testslow.Long {
			args = append(args, "--rounds", "50", "--window", "12000")
			demoRounds = 50
		}
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append(args, "--root", "../.."), &stdout, &stderr)
		demoOut = stdout.String()
		if code != 0 {
			demoErr = fmt.Sprintf("%s: exit %d\n%s\n%s", strings.Join(args, " "), code, demoOut, stderr.String())
		}
	})
	if demoErr != "" {
		t.Fatal(demoErr)
	}
	return demoOut, demoRounds
}

var (
	demoOnce         sync.Once
	demoOut, demoErr string
	demoRounds       int
)

// The demo is the README's first command: a long session on this
// repository against the simulated engine, with sheds, folds and no
// overflow.
func TestDemo(t *testing.T) {
	out, rounds := demoRun(t)
	for _, want := range []string{"▸ shed", "▸ fold", "note:", "overflows         0", fmt.Sprintf("rounds            %d\n", rounds+1), "prefilled anew", "decoded", "engine time"} {
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
	if strings.Count(out, "\n") < rounds {
		t.Errorf("the demo printed %d lines, want a line per round of %d rounds", strings.Count(out, "\n"), rounds)
	}
}

// The demo's summary is the same in every run of the same tree: the
// lower bound counts every request the engine received, after it has
// recorded the last (it did not always: 1.7× in some runs, 1.0× in the
// others), and the paths the model reads (the spill files') are of one
// length. Only the time taken and the engine's port may differ, and
// the figures of a run where a file's parse ran over the repo map's time
// limit (a busy machine), which the demo says; such a run is not compared.
func TestDemoSummaryStable(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo runs in the pass without the race detector")
	}
	summary := func() string {
		var stdout, stderr bytes.Buffer
		code := runDemo(context.Background(), []string{"--root", "../..", "--rounds", "3"}, &stdout, &stderr)
		if code == 0 && strings.Contains(stderr.String(), repomap.NoteTimedOut) {
			t.Logf("not compared: %s", strings.TrimSpace(stderr.String()))
			return ""
		}
		if code != 0 || stderr.Len() > 0 {
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
	var first string
	compared := 0
	for run := 1; run <= 5 && compared < 2; run++ {
		got := summary()
		switch {
		case got == "":
		case first == "":
			first = got
			if !strings.Contains(first, "against a lower bound of") {
				t.Fatalf("the demo prints no lower bound:\n%s", first)
			}
		default:
			if diff := cmp.Diff(first, got); diff != "" {
				t.Fatalf("run %d printed another summary than the first (-first +run %d):\n%s", run, run, diff)
			}
			compared++
		}
	}
	if compared == 0 {
		t.Errorf("of five runs, fewer than two parsed every file of the repo map in time: nothing to compare")
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
