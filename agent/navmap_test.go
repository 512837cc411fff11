package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/config"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/repomap"
)

// navProject is a small workspace in Go, Python and TypeScript: each
// language defines a name and uses it in another file, and writes it
// once more in a comment or a string, where it is no reference.
var navProject = map[string]string{
	"store/store.go": `package store

// Open opens the store; "Open" in a comment is no use.
type Store struct{ path string }

func Open(path string) *Store {
	return &Store{path: path}
}

func (s *Store) Close() error {
	return nil
}
`,
	"cmd/main.go": `package main

import "example.com/store"

func main() {
	s := store.Open("Open")
	defer s.Close()
}
`,
	"py/store.py":  "def open_store(path):\n    # open_store is documented here\n    return path\n",
	"py/app.py":    "from store import open_store\n\ns = open_store(\"x\")\n",
	"web/store.ts": "export function openStore(path: string): string {\n  return path;\n}\n",
	"web/app.ts":   "import { openStore } from './store';\n\nconst s = openStore(`openStore`);\n",
}

// navWorkspace writes files to a new folder and maps them, as the demo
// maps a project; it returns the folder and the map.
func navWorkspace(t *testing.T, files map[string]string) (string, *repomap.Map) {
	t.Helper()
	root := t.TempDir()
	m := repomap.New()
	t.Cleanup(m.Close)
	for rel, text := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		m.Update(rel, []byte(text))
	}
	return root, m
}

// places writes an answer's locations as path:line:col.
func places(a tools.NavAnswer) []string {
	var out []string
	for _, l := range a.Locations {
		out = append(out, l.Path+":"+itoa(l.Line)+":"+itoa(l.Column))
	}
	return out
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// openBuffer is an editor with one open document.
type openBuffer struct{ abs, text string }

func (b openBuffer) Open(abs string) (string, int32, bool) {
	return b.text, 1, abs == b.abs
}

func TestMapNavigator(t *testing.T) {
	root, m := navWorkspace(t, navProject)
	nav := newMapNavigator(MapFiles(m).(MapIndex), []string{root}, nil, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		ask  func() (tools.NavAnswer, error)
		want []string
	}{
		{"definition by name", func() (tools.NavAnswer, error) { return nav.Definition(ctx, tools.NavQuery{Symbol: "Open"}) }, []string{"store/store.go:6:6"}},
		{"definition at a use", func() (tools.NavAnswer, error) {
			return nav.Definition(ctx, tools.NavQuery{Path: "cmd/main.go", Line: 6, Column: 14})
		}, []string{"store/store.go:6:6"}},
		{"definition of a method", func() (tools.NavAnswer, error) { return nav.Definition(ctx, tools.NavQuery{Symbol: "Store.Close"}) }, []string{"store/store.go:10:17"}},
		{"python references", func() (tools.NavAnswer, error) { return nav.References(ctx, tools.NavQuery{Symbol: "open_store"}) }, []string{"py/app.py:1:19", "py/app.py:3:5", "py/store.py:1:5"}},
		{"typescript references", func() (tools.NavAnswer, error) {
			return nav.References(ctx, tools.NavQuery{Path: "web/app.ts", Line: 3, Column: 11})
		}, []string{"web/app.ts:1:10", "web/app.ts:3:11", "web/store.ts:1:17"}},
		{"symbols of a file", func() (tools.NavAnswer, error) { return nav.Symbols(ctx, tools.NavQuery{Path: "store/store.go"}) }, []string{"store/store.go:4:1", "store/store.go:6:1", "store/store.go:10:1"}},
		{"symbols by name", func() (tools.NavAnswer, error) { return nav.Symbols(ctx, tools.NavQuery{Symbol: "openst"}) }, []string{"web/store.ts:1:1"}},
	} {
		a, err := tc.ask()
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got := places(a); !slices.Equal(got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.name, got, tc.want)
		}
		if !a.Approximate || a.Source != "repo map" {
			t.Errorf("%s: approximate %v, source %q; want an approximate answer of the repo map", tc.name, a.Approximate, a.Source)
		}
	}
	def, _ := nav.Definition(ctx, tools.NavQuery{Symbol: "Open"})
	if s := def.Locations[0].Snippet; !strings.Contains(s, "func Open(path string) *Store {") || !strings.Contains(s, "     8\t}") {
		t.Errorf("definition's snippet = %q, want the whole function, numbered", s)
	}
	refs, _ := nav.References(ctx, tools.NavQuery{Symbol: "Open"})
	if got := places(refs); !slices.Equal(got, []string{"cmd/main.go:6:13", "store/store.go:6:6"}) || !strings.Contains(refs.Locations[0].Snippet, "func main()") {
		t.Errorf("references of Open = %v, first snippet %q; want the two uses, in main", got, refs.Locations[0].Snippet)
	}
	if _, err := nav.Definition(ctx, tools.NavQuery{Path: "store/store.go", Line: 3, Column: 5}); err == nil || !strings.Contains(err.Error(), "no name") {
		t.Errorf("definition inside a comment: %v, want an error saying there is no name", err)
	}
	for _, h := range []func(context.Context) (tools.NavAnswer, error){
		func(ctx context.Context) (tools.NavAnswer, error) {
			return nav.Hover(ctx, tools.NavQuery{Symbol: "Open"})
		},
		func(ctx context.Context) (tools.NavAnswer, error) {
			return nav.Diagnostics(ctx, []string{"cmd/main.go"})
		},
	} {
		if a, err := h(ctx); err != nil || !strings.Contains(a.Text, "no language server") || a.Approximate {
			t.Errorf("hover or diagnostics = %+v, %v; want told that no language server runs", a, err)
		}
	}
}

// A file the map does not hold yet is read into it when its symbols are
// asked for; an open document wins over the disk.
func TestMapNavigatorReadsAndLearns(t *testing.T) {
	root, m := navWorkspace(t, navProject)
	extra := filepath.Join(root, "extra", "extra.go")
	if err := os.MkdirAll(filepath.Dir(extra), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(extra, []byte("package extra\n\nfunc Extra() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	edited := "package store\n\n\n\nfunc Open(path string) *Store {\n\treturn nil\n}\n"
	nav := newMapNavigator(MapFiles(m).(MapIndex), []string{root}, openBuffer{filepath.Join(root, "store", "store.go"), edited}, nil)
	a, err := nav.Symbols(context.Background(), tools.NavQuery{Path: "extra/extra.go"})
	if err != nil || !slices.Equal(places(a), []string{"extra/extra.go:3:1"}) {
		t.Errorf("symbols of a file the map lacked = %v, %v", places(a), err)
	}
	if len(m.Definitions("Extra")) != 1 {
		t.Errorf("the map did not learn extra/extra.go")
	}
	// The map still has the disk's Open on line 6; the buffer has it on
	// line 5: the snippet is the buffer's lines, the place the map's.
	def, _ := nav.Definition(context.Background(), tools.NavQuery{Symbol: "Open"})
	if len(def.Locations) != 1 || !strings.Contains(def.Locations[0].Snippet, "return nil") {
		t.Errorf("definition from an open document = %+v, want the buffer's text", def.Locations)
	}
}

// A session whose repo map has an index offers the navigation tools, and
// a model that calls definition and references gets the map's answers,
// marked approximate; a session without one does not offer them.
func TestNavigationSession(t *testing.T) {
	root, m := navWorkspace(t, navProject)
	srv, url := simURL(t, sim.Config{Ctx: 16384})
	srv.AppendScript(
		sim.Turn{Content: "Where is Open?", ToolCalls: []sim.ScriptCall{
			{Name: "definition", Arguments: []byte(`{"symbol":"Open"}`)},
			{Name: "references", Arguments: []byte(`{"path":"store/store.go","line":6,"column":6}`)},
		}},
		sim.Turn{Content: "Open is defined in store/store.go and called from cmd/main.go."},
	)
	zero := 0.0
	s, err := Start(context.Background(), Setup{
		Getenv:     func(string) string { return "" },
		ConfigFile: NoConfigFile,
		Override: func(st *config.Settings) {
			st.Endpoint = config.Value[string]{Value: url, Source: config.Source{Layer: config.Flag, Detail: "test"}}
		},
		Folders:     []string{root},
		StateDir:    NoTranscript,
		RepoMap:     MapFiles(m),
		Temperature: &zero,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var c collect
	res, err := s.Run(context.Background(), "Where is Open defined and used?", c.add)
	if err != nil || res.End != Answered {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	reqs := recorded(t, srv, 2)
	if len(reqs) < 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	for _, name := range []string{"definition", "references", "symbols", "hover", "diagnostics"} {
		if !slices.Contains(reqs[0].Tools, name) {
			t.Errorf("tools offered = %v, want %s among them", reqs[0].Tools, name)
		}
	}
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[len(reqs)-1].Body, &body); err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, msg := range body.Messages {
		if msg.Role == "tool" {
			results = append(results, msg.Content)
		}
	}
	if len(results) != 2 {
		t.Fatalf("%d tool results in the last request, want 2: %q", len(results), results)
	}
	for i, want := range []string{"definition of Open: 1 location\nstore/store.go:6:6\n", "cmd/main.go:6:13\n"} {
		if !strings.HasPrefix(results[i], tools.NavApproximate+"\n") || !strings.Contains(results[i], want) {
			t.Errorf("result %d = %q, want it approximate and with %q", i, results[i], want)
		}
	}

	plain, err := Start(context.Background(), Setup{
		Getenv: func(string) string { return "" }, ConfigFile: NoConfigFile,
		Override: func(st *config.Settings) {
			st.Endpoint = config.Value[string]{Value: url, Source: config.Source{Layer: config.Flag, Detail: "test"}}
		},
		Folders: []string{root}, StateDir: NoTranscript, RepoMap: mapOf("a map without an index"),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for _, d := range plain.tools {
		if d.Name == "definition" {
			t.Errorf("a session whose map has no index offers %s", d.Name)
		}
	}
}
