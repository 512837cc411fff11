package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The commands the sandbox contains run in it; one the user let out of it
// runs in the editor's terminal, with its output and status; one the
// terminal cannot run runs here.
func TestBashInTheTerminal(t *testing.T) {
	root := workspace(t, nil)
	q := &questions{answers: []Answer{Once, Once}}
	sb := &fakeSandbox{}
	var inTerminal []string
	broken, lost := false, false
	term := func(ctx context.Context, command, dir string) (string, int, error) {
		if broken {
			return "", 0, fmt.Errorf("%w: no terminal", ErrNoTerminal)
		}
		inTerminal = append(inTerminal, command+" in "+dir)
		if lost {
			return "", 0, errors.New("the client stopped answering")
		}
		return "printed in the terminal\n", 3, nil
	}
	q.answers = append(q.answers, Once)
	s := newSet(t, root, Config{Ask: q.ask, BashAllow: []string{"true", "echo"}, Sandbox: sb, Terminal: term})
	ctx := WithRun(context.Background(), Normal)
	runTool(t, s, ctx, "bash", map[string]any{"command": "true"})
	res := runTool(t, s, ctx, "bash", map[string]any{"command": "echo outside", "outside_sandbox": true})
	if res.Content != "printed in the terminal\n[exit status 3]" {
		t.Errorf("bash outside = %q, want the terminal's output and status", res.Content)
	}
	broken = true
	res = runTool(t, s, ctx, "bash", map[string]any{"command": "echo here", "outside_sandbox": true})
	if !strings.HasPrefix(res.Content, "here\n") {
		t.Errorf("bash outside with no terminal = %q, want it run here", res.Content)
	}
	// A command the terminal started and lost track of is not run again.
	broken, lost = false, true
	res = runTool(t, s, ctx, "bash", map[string]any{"command": "echo once", "outside_sandbox": true})
	if !res.Error || strings.Contains(res.Content, "once\n") || !strings.Contains(res.Content, "did not say how it ended") {
		t.Errorf("bash outside, the terminal lost = %q, want a failure and no second run", res.Content)
	}
	if d := cmp.Diff([]string{"true"}, sb.started); d != "" {
		t.Errorf("started in the sandbox (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"echo outside in " + root, "echo once in " + root}, inTerminal); d != "" {
		t.Errorf("run in the terminal (-want +got):\n%s", d)
	}
	if len(q.asked) != 3 {
		t.Errorf("asked %d times, want each command outside the sandbox asked", len(q.asked))
	}
}
