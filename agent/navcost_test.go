package agent

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/repomap"
)

// What navigation costs the context, measured on this repository's own
// code: for each symbol, what a model reads the usual way (grep for the
// name, then read the file that defines it) against what definition and
// references give it, both through the real tools over the same files.
// Bytes are what the model reads; a token is about 4 of them in code.
//
//	go test ./agent -run TestNavigationCost -v
//
// (REIKA_NAV_SHOW=NAME logs the references answer of one of the symbols.)
func TestNavigationCost(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	// The map holds the files grep searches: three packages' sources,
	// tests among them.
	dirs := []string{"contextwin", "repomap", "agent/tools"}
	m := repomap.New()
	defer m.Close()
	for _, dir := range dirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() && d.Name() == "testdata" {
				return cmpSkip(err, d)
			}
			if !d.IsDir() && strings.HasSuffix(p, ".go") {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				rel, _ := filepath.Rel(root, p)
				m.Update(filepath.ToSlash(rel), b)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	set, err := tools.New(tools.Config{Folders: []string{root}, Navigator: newMapNavigator(MapFiles(m).(MapIndex), []string{root}, nil, nil)})
	if err != nil {
		t.Fatal(err)
	}
	run := func(tool string, args map[string]any) string {
		b, _ := json.Marshal(args)
		res := set.Run(context.Background(), engine.ToolCall{Name: tool, Arguments: string(b)})
		if res.Error {
			t.Fatalf("%s %s: %s", tool, b, res.Content)
		}
		return res.Content
	}
	var grepTotal, navTotal int
	for _, name := range []string{"Summarize", "ShouldSpill", "NavSnippet", "PlanEdit", "Occurrences", "languageFor", "clipWithCount", "Payload"} {
		defs := m.Definitions(name)
		if len(defs) == 0 {
			t.Fatalf("the map has no definition of %s", name)
		}
		grep := 0
		for _, dir := range dirs {
			grep += len(run(tools.GrepTool, map[string]any{"pattern": name, "path": dir}))
		}
		read := len(run(tools.ReadTool, map[string]any{"path": defs[0].Path}))
		def := len(run(tools.DefinitionTool, map[string]any{"symbol": name}))
		refs := run(tools.ReferencesTool, map[string]any{"symbol": name})
		nav := def + len(refs)
		if os.Getenv("REIKA_NAV_SHOW") == name {
			t.Logf("references of %s:\n%s", name, refs)
		}
		t.Logf("%-14s grep %6d + read %6d = %6d bytes (~%5d tokens); definition %5d + references %5d = %5d bytes (~%4d tokens): %3.0f%%",
			name, grep, read, grep+read, (grep+read)/4, def, len(refs), nav, nav/4, 100*float64(nav)/float64(grep+read))
		grepTotal += grep + read
		navTotal += nav
	}
	t.Logf("total: grep and read %d bytes (~%d tokens), definition and references %d bytes (~%d tokens): %.0f%%",
		grepTotal, grepTotal/4, navTotal, navTotal/4, 100*float64(navTotal)/float64(grepTotal))
	if navTotal >= grepTotal {
		t.Errorf("navigation cost %d bytes, grep and read %d: the tools save nothing", navTotal, grepTotal)
	}
}

// cmpSkip is what a walk does with err, or with a testdata directory d:
// stop on the error, skip the directory.
func cmpSkip(err error, d fs.DirEntry) error {
	if err != nil {
		return err
	}
	if d != nil && d.IsDir() {
		return filepath.SkipDir
	}
	return nil
}
