package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/contextwin"
)

// fakeChecker answers Introduced from its fields and records the calls.
type fakeChecker struct {
	ans   tools.NavAnswer
	err   error
	calls []string
}

func (f *fakeChecker) Introduced(_ context.Context, abs, old string) (tools.NavAnswer, error) {
	f.calls = append(f.calls, filepath.Base(abs)+" was "+old)
	return f.ans, f.err
}

// runEdit runs a session whose model makes one edit of main.go, applied
// when apply says so, with checker (nil for none), and returns the
// edit's result as the model got it.
func runEdit(t *testing.T, checker EditChecker, apply bool) string {
	t.Helper()
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	srv, client := simEngine(t, sim.Config{Ctx: 16384})
	srv.AppendScript(
		sim.Turn{ToolCalls: []sim.ScriptCall{{Name: "edit", Arguments: json.RawMessage(`{"path":"main.go","old_text":"func main() {}","new_text":"func main() { f(1) }"}`)}}},
		sim.Turn{Content: "Done."},
	)
	ts, err := tools.New(tools.Config{Folders: []string{ws}, Proposer: func(_ context.Context, p tools.Proposal) (tools.Outcome, error) {
		if !apply {
			return tools.Outcome{Reason: "the user rejected it"}, nil
		}
		return tools.Outcome{Applied: true}, os.WriteFile(p.Abs, []byte(p.New), 0o644)
	}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := sessionConfig{Engine: client, Tools: ts, Workspace: ws, TranscriptDir: t.TempDir(), Context: contextwin.Config{Window: 16384}}
	if checker != nil {
		cfg.Checker = checker
	}
	s, err := newSession(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var c collect
	if _, err := s.Run(context.Background(), "Call f.", c.add); err != nil {
		t.Fatal(err)
	}
	for _, e := range c.events {
		if e.Kind == ToolRan && e.Tool == "edit" {
			return e.Text
		}
	}
	t.Fatal("no edit ran")
	return ""
}

func TestIntroducedErrorsJoinTheEditsResult(t *testing.T) {
	var locs []tools.NavLocation
	for i := range 12 {
		locs = append(locs, tools.NavLocation{Path: "main.go", Line: 3, Column: 15 + i, Severity: "error", Message: "undefined:\n f"})
	}
	checker := &fakeChecker{ans: tools.NavAnswer{Source: "gopls", Locations: locs}}
	got := runEdit(t, checker, true)
	want := "\n\nErrors this edit introduced (gopls):\nmain.go:3:15: undefined: f\n"
	if !strings.Contains(got, want) || !strings.HasSuffix(got, "main.go:3:24: undefined: f\n… and 2 more") {
		t.Errorf("the edit's result = %q, want it to end with the errors, ten of them and a count", got)
	}
	if len(checker.calls) != 1 || checker.calls[0] != "main.go was package main\n\nfunc main() {}\n" {
		t.Errorf("Introduced was called %q, want once with main.go's text before the edit", checker.calls)
	}
}

func TestIntroducedIsANoOp(t *testing.T) {
	plain := runEdit(t, nil, true)
	if strings.Contains(plain, "Errors this edit") {
		t.Fatalf("without a checker the result = %q", plain)
	}
	for name, tc := range map[string]struct {
		checker *fakeChecker
		apply   bool
		calls   int
	}{
		"no errors":      {&fakeChecker{ans: tools.NavAnswer{Source: "gopls"}}, true, 1},
		"server failed":  {&fakeChecker{err: errors.New("gopls failed twice")}, true, 1},
		"edit not taken": {&fakeChecker{ans: tools.NavAnswer{Source: "gopls", Locations: []tools.NavLocation{{Message: "x"}}}}, false, 0},
	} {
		t.Run(name, func(t *testing.T) {
			got := runEdit(t, tc.checker, tc.apply)
			if strings.Contains(got, "Errors this edit") || len(tc.checker.calls) != tc.calls {
				t.Errorf("the edit's result = %q after %d calls, want no errors told and %d calls", got, len(tc.checker.calls), tc.calls)
			}
			if tc.apply && got != plain {
				t.Errorf("the edit's result = %q, want it as without a checker: %q", got, plain)
			}
		})
	}
}
