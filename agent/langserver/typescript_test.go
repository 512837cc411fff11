package langserver

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/tools"
)

// needTSServer returns typescript-language-server's path, skipping the
// test when it is missing, unless REIKA_EDITORS=require (CI, after
// .ci/install-tsserver), where a missing server fails it.
func needTSServer(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath(tsName)
	if err == nil {
		return path
	}
	const msg = "typescript-language-server is not installed (.ci/install-tsserver installs it)"
	if os.Getenv("REIKA_EDITORS") == "require" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// tsWorkspace copies testdata/tsproject (and extra files) into a new
// folder and returns it with servers that run typescript-language-server
// on it.
func tsWorkspace(t *testing.T, extra map[string]string) (string, *Servers) {
	t.Helper()
	tsls := needTSServer(t)
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(filepath.Join("testdata", "tsproject"))); err != nil {
		t.Fatal(err)
	}
	for name, text := range extra {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The first look at a file waits up to Timeout, the project's load;
	// Settle stays the default, the bound every later wait has.
	s := New(Options{Folders: []string{root},
		Servers: []Server{{Name: tsName, Command: []string{tsls, "--stdio"}, Languages: []string{"typescript"}}}})
	t.Cleanup(func() { s.Close() })
	return root, s
}

// places writes an answer's locations as path:line:col.
func tsPlaces(ans tools.NavAnswer) string {
	var out []string
	for _, l := range ans.Locations {
		out = append(out, l.Path+":"+strconv.Itoa(l.Line)+":"+strconv.Itoa(l.Column))
	}
	return strings.Join(out, " ")
}

func TestTypeScriptNavigation(t *testing.T) {
	_, s := tsWorkspace(t, nil)
	ctx := context.Background()
	def, err := s.Definition(ctx, tools.NavQuery{Path: "src/main.ts", Line: 4, Symbol: "add"})
	if err != nil {
		t.Fatalf("Definition: %v", err)
	}
	if got := tsPlaces(def); def.Source != tsName || def.Approximate || got != "src/math.ts:2:17" {
		t.Fatalf("Definition = %s from %q (approximate %v), want src/math.ts:2:17 from %s", got, def.Source, def.Approximate, tsName)
	}
	if snip := def.Locations[0].Snippet; !strings.Contains(snip, "return a + b;") {
		t.Errorf("Definition's snippet = %q, want add's body", snip)
	}
	refs, err := s.References(ctx, tools.NavQuery{Path: "src/math.ts", Line: 2, Symbol: "add"})
	if err != nil {
		t.Fatalf("References: %v", err)
	}
	if got, want := tsPlaces(refs), "src/main.ts:1:10 src/main.ts:4:10 src/main.ts:8:10 src/main.ts:8:14"; got != want {
		t.Errorf("References = %s, want %s", got, want)
	}
}

func TestTypeScriptIntroduced(t *testing.T) {
	root, s := tsWorkspace(t, nil)
	ctx := context.Background()
	old, err := os.ReadFile(filepath.Join(root, "src", "main.ts"))
	if err != nil {
		t.Fatal(err)
	}
	// The first load of the project, outside the bound under test.
	if ans, err := s.Diagnostics(ctx, []string{"src/main.ts"}); err != nil || len(ans.Locations) != 0 {
		t.Fatalf("Diagnostics before the edit = %+v, %v; want none", ans, err)
	}
	broken := strings.Replace(string(old), "return add(x, x);", `return add(x, "two");`, 1)
	if err := os.WriteFile(filepath.Join(root, "src", "main.ts"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	ans, err := s.Introduced(ctx, "src/main.ts", string(old))
	if err != nil {
		t.Fatalf("Introduced: %v", err)
	}
	if ans.Source != tsName || len(ans.Locations) != 1 {
		t.Fatalf("Introduced (a string for a number) = %+v, want one error from %s", ans, tsName)
	}
	if l := ans.Locations[0]; l.Path != "src/main.ts" || l.Line != 4 || l.Severity != "error" || !strings.Contains(l.Message, `"string" is not assignable to parameter of type 'number'`) && !strings.Contains(l.Message, `'string' is not assignable to parameter of type 'number'`) {
		t.Errorf("the error = %+v, want src/main.ts:4's string not assignable to number", l)
	}
}

// The server runs no code of the workspace: not its own
// node_modules/typescript (which typescript-language-server prefers to
// its own unless told), nor a tsserver plugin its tsconfig.json names.
// Each would write a file if it ran.
func TestTypeScriptRunsNoWorkspaceCode(t *testing.T) {
	marker := func(name string) string {
		return "require('fs').writeFileSync(require('path').join(" + strconv.Quote("..") + ", " + strconv.Quote(name) + "), 'ran');\n"
	}
	root, s := tsWorkspace(t, map[string]string{
		"tsconfig.json":                             `{"compilerOptions": {"strict": true, "noEmit": true, "plugins": [{"name": "evil-plugin"}]}, "include": ["src"]}`,
		"node_modules/typescript/package.json":      `{"name": "typescript", "version": "5.9.3"}`,
		"node_modules/typescript/lib/tsserver.js":   "process.chdir(__dirname + '/../../..');\n" + marker("ran-tsserver"),
		"node_modules/typescript/lib/typescript.js": "",
		"node_modules/evil-plugin/package.json":     `{"name": "evil-plugin", "main": "index.js"}`,
		"node_modules/evil-plugin/index.js":         "process.chdir(__dirname + '/../..');\n" + marker("ran-plugin") + "module.exports = () => ({ create: (info) => info.languageService });\n",
	})
	ctx := context.Background()
	def, err := s.Definition(ctx, tools.NavQuery{Path: "src/main.ts", Line: 4, Symbol: "add"})
	if err != nil || tsPlaces(def) != "src/math.ts:2:17" {
		t.Errorf("Definition = %+v, %v; want src/math.ts:2:17", def, err)
	}
	if _, err := s.Diagnostics(ctx, []string{"src/main.ts"}); err != nil {
		t.Errorf("Diagnostics: %v", err)
	}
	for _, name := range []string{"ran-tsserver", "ran-plugin"} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(root), name)); err == nil {
			t.Errorf("the workspace's code ran: %s was written", name)
		}
	}
}

// The tsserver named is the one installed beside the program, found
// through the links npm makes; with none there the server is not
// started, rather than left to run the workspace's.
func TestBesideTSServer(t *testing.T) {
	prefix := t.TempDir()
	write := func(name string) string {
		p := filepath.Join(prefix, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cli := write("lib/node_modules/typescript-language-server/lib/cli.mjs")
	bin := filepath.Join(prefix, "bin", tsName)
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cli, bin); err != nil {
		t.Fatal(err)
	}
	if _, err := besideTSServer(bin); err == nil || !strings.Contains(err.Error(), "no typescript installed beside") {
		t.Errorf("besideTSServer without typescript = %v, want an error saying so", err)
	}
	want := write("lib/node_modules/typescript/lib/tsserver.js")
	if got, err := besideTSServer(bin); err != nil || got != want {
		t.Errorf("besideTSServer = %q, %v; want %q", got, err, want)
	}
	opts, err := initOptions(Server{Name: tsName, Command: []string{bin, "--stdio"}})
	init, ok := opts.(tsInit)
	if err != nil || !ok || init.TSServer.Path != want || !init.DisableAutomaticTypingAcquisition || init.Plugins == nil {
		t.Errorf("initOptions = %+v, %v; want %s, no typing acquisition and no plugins", opts, err, want)
	}
}

// typescript-language-server keeps UTF-16 positions; a use after
// non-ASCII text on its line is found and reported at its byte column.
func TestTypeScriptNonASCIILine(t *testing.T) {
	root, s := tsWorkspace(t, map[string]string{
		"src/intl.ts": "import { add } from \"./math\";\nexport const greeting = \"é😀\", total = add(1, 2);\n",
	})
	ctx := context.Background()
	// add is at byte 42 of line 2 (UTF-16 unit 38): column 43.
	def, err := s.Definition(ctx, tools.NavQuery{Path: "src/intl.ts", Line: 2, Column: 43})
	if err != nil || tsPlaces(def) != "src/math.ts:2:17" {
		t.Fatalf("Definition at src/intl.ts:2:43 = %+v, %v; want src/math.ts:2:17", def, err)
	}
	if enc := negotiated(t, s, root, tsName); enc != encUTF16 {
		t.Errorf("%s runs with %s positions, want utf-16 (it names none)", tsName, enc)
	}
	refs, err := s.References(ctx, tools.NavQuery{Path: "src/math.ts", Line: 2, Symbol: "add"})
	if err != nil || !strings.Contains(" "+tsPlaces(refs)+" ", " src/intl.ts:2:43 ") {
		t.Errorf("References = %s, %v; want src/intl.ts:2:43 among them", tsPlaces(refs), err)
	}
}
