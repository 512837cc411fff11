package agent

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/config"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/agent/tools"
)

// A session Start builds on a Go module asks gopls (found on PATH) after
// each applied edit: one that breaks the build brings the compiler's
// error into the edit's result; one that does not, nothing. Skipped
// without gopls, unless REIKA_EDITORS=require.
func TestStartTellsTheErrorsAnEditIntroduced(t *testing.T) {
	if _, err := exec.LookPath("gopls"); err != nil {
		if os.Getenv("REIKA_EDITORS") == "require" {
			t.Fatal("gopls is not installed (.ci/install-gopls installs it)")
		}
		t.Skip("gopls is not installed (.ci/install-gopls installs it)")
	}
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nfunc f(n int) {}\n\nfunc main() {\n\tf(1)\n}\n"), 0o644)
	srv, url := simURL(t, sim.Config{Ctx: 16384})
	edit := func(old, new string) sim.Turn {
		args, _ := json.Marshal(map[string]string{"path": "main.go", "old_text": old, "new_text": new})
		return sim.Turn{ToolCalls: []sim.ScriptCall{{Name: "edit", Arguments: args}}}
	}
	srv.AppendScript(edit("f(1)", `f("one")`), edit("func main() {", "// main calls f.\nfunc main() {"), sim.Turn{Content: "Done."})
	s, err := Start(context.Background(), Setup{
		Getenv:     func(string) string { return "" },
		ConfigFile: NoConfigFile,
		Override: func(st *config.Settings) {
			st.Endpoint = config.Value[string]{Value: url, Source: config.Source{Layer: config.Flag, Detail: "test"}}
		},
		Folders:  []string{ws},
		StateDir: NoTranscript,
		Proposer: func(_ context.Context, p tools.Proposal) (tools.Outcome, error) {
			return tools.Outcome{Applied: true}, os.WriteFile(p.Abs, []byte(p.New), 0o644)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var c collect
	if _, err := s.Run(context.Background(), "Change main.", c.add); err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, e := range c.events {
		if e.Kind == ToolRan && e.Tool == "edit" {
			results = append(results, e.Text)
		}
	}
	if len(results) != 2 {
		t.Fatalf("%d edits ran, want 2", len(results))
	}
	if !strings.Contains(results[0], "\n\nErrors this edit introduced (gopls):\nmain.go:6:4: cannot use \"one\"") {
		t.Errorf("the breaking edit's result = %q, want gopls's error at main.go:6:4", results[0])
	}
	// The second edit leaves the first one's error where it was: not its.
	if strings.Contains(results[1], "Errors this edit introduced") {
		t.Errorf("the comment's result = %q, want no errors told", results[1])
	}
}

// In a session whose repo map has an index, gopls answers the navigation
// tools for the Go files of a module: exact, not approximate.
func TestStartNavigatesWithGopls(t *testing.T) {
	if _, err := exec.LookPath("gopls"); err != nil {
		if os.Getenv("REIKA_EDITORS") == "require" {
			t.Fatal("gopls is not installed (.ci/install-gopls installs it)")
		}
		t.Skip("gopls is not installed (.ci/install-gopls installs it)")
	}
	root, m := navWorkspace(t, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"a.go":   "package m\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n",
		"b.go":   "package m\n\nfunc Twice(x int) int { return Add(x, x) }\n",
	})
	srv, url := simURL(t, sim.Config{Ctx: 16384})
	srv.AppendScript(
		sim.Turn{ToolCalls: []sim.ScriptCall{{Name: "definition", Arguments: []byte(`{"symbol":"Add"}`)}}},
		sim.Turn{Content: "Add is in a.go."},
	)
	s, err := Start(context.Background(), Setup{
		Getenv:     func(string) string { return "" },
		ConfigFile: NoConfigFile,
		Override: func(st *config.Settings) {
			st.Endpoint = config.Value[string]{Value: url, Source: config.Source{Layer: config.Flag, Detail: "test"}}
		},
		Folders:  []string{root},
		StateDir: NoTranscript,
		RepoMap:  MapFiles(m),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var c collect
	if _, err := s.Run(context.Background(), "Where is Add?", c.add); err != nil {
		t.Fatal(err)
	}
	for _, e := range c.events {
		if e.Kind == ToolRan && e.Tool == "definition" {
			if strings.HasPrefix(e.Text, tools.NavApproximate) || !strings.Contains(e.Text, "a.go:4:6") || !strings.Contains(e.Text, "func Add(a, b int) int") {
				t.Errorf("definition's result = %q, want gopls's a.go:4:6, not approximate", e.Text)
			}
			return
		}
	}
	t.Fatal("no definition ran")
}
