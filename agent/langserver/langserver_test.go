package langserver

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent/tools"
)

func TestServerEnv(t *testing.T) {
	environ := []string{"PATH=/bin", "HOME=/h", "REIKA_ENDPOINT=x", "reika_debug=1", "MY_KEY=sk-secret", "COPY=sk-secret", "GOPATH=/g", "GOTOOLCHAIN=auto"}
	got := strings.Join(serverEnv(environ, "MY_KEY"), " ")
	if want := "PATH=/bin HOME=/h GOPATH=/g GOTOOLCHAIN=local"; got != want {
		t.Errorf("serverEnv = %q, want %q", got, want)
	}
	if got := strings.Join(serverEnv(environ, ""), " "); strings.Contains(got, "REIKA") || !strings.Contains(got, "MY_KEY") {
		t.Errorf("serverEnv without a key variable = %q, want only REIKA_* dropped", got)
	}
}

func TestDefaults(t *testing.T) {
	look := func(name string) (string, error) {
		if name == "gopls" || name == "pyright-langserver" {
			return "/opt/" + name, nil
		}
		return "", errors.New("not found")
	}
	var got []string
	for _, s := range Defaults(look) {
		got = append(got, s.Name+"="+strings.Join(s.Command, " "))
	}
	if want := "gopls=/opt/gopls pyright=/opt/pyright-langserver --stdio"; strings.Join(got, " ") != want {
		t.Errorf("Defaults = %q, want %q", strings.Join(got, " "), want)
	}
}

func TestPosition(t *testing.T) {
	text := "package m\n\tx := \"é😀\" + Add(Adder, Add)\n"
	for _, tc := range []struct {
		line, col int
		symbol    string
		want      protocol.Position
		err       bool
	}{
		{line: 2, symbol: "Add", want: protocol.Position{Line: 1, Character: 14}},
		{line: 2, symbol: "Adder", want: protocol.Position{Line: 1, Character: 18}},
		{line: 2, col: 18, want: protocol.Position{Line: 1, Character: 14}}, // é is 2 bytes, 😀 4 bytes and 2 UTF-16 units
		{line: 1, symbol: "Add", err: true},
		{line: 0, symbol: "Add", err: true},
	} {
		got, err := position(text, tc.line, tc.col, tc.symbol)
		if (err != nil) != tc.err || err == nil && got != tc.want {
			t.Errorf("position(%d, %d, %q) = %v, %v; want %v (error %v)", tc.line, tc.col, tc.symbol, got, err, tc.want, tc.err)
		}
	}
	line := lineOf(text, 1)
	for col := range len(line) + 1 {
		if col < len(line) && !isRuneStart(line[col]) {
			continue
		}
		if back := byteCol(line, utf16Col(line, col)); back != col {
			t.Errorf("byteCol(utf16Col(%d)) = %d", col, back)
		}
	}
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func TestDecodeLocations(t *testing.T) {
	for _, raw := range []string{
		`{"uri":"file:///a.go","range":{"start":{"line":3,"character":5},"end":{"line":3,"character":8}}}`,
		`[{"uri":"file:///a.go","range":{"start":{"line":3,"character":5},"end":{"line":3,"character":8}}}]`,
		`[{"targetUri":"file:///a.go","targetRange":{"start":{"line":2,"character":0},"end":{"line":5,"character":1}},"targetSelectionRange":{"start":{"line":3,"character":5},"end":{"line":3,"character":8}}}]`,
	} {
		got := decodeLocations(json.RawMessage(raw))
		if len(got) != 1 || got[0].URI != "file:///a.go" || got[0].Range.Start != (protocol.Position{Line: 3, Character: 5}) {
			t.Errorf("decodeLocations(%s) = %+v", raw, got)
		}
	}
	if got := decodeLocations(json.RawMessage(`null`)); len(got) != 0 {
		t.Errorf("decodeLocations(null) = %+v", got)
	}
}

func TestHoverText(t *testing.T) {
	for raw, want := range map[string]string{
		`{"kind":"plaintext","value":"func F()"}`: "func F()",
		`"func F()"`: "func F()",
		`[{"language":"go","value":"func F()"},"F does things."]`: "func F()\n\nF does things.",
	} {
		if got := hoverText(json.RawMessage(raw)); got != want {
			t.Errorf("hoverText(%s) = %q, want %q", raw, got, want)
		}
	}
}

func TestNewErrors(t *testing.T) {
	e := func(line uint32, msg string) protocol.Diagnostic {
		return protocol.Diagnostic{Range: protocol.Range{Start: protocol.Position{Line: line}}, Severity: protocol.DiagnosticSeverityError, Message: msg}
	}
	warn := protocol.Diagnostic{Severity: protocol.DiagnosticSeverityWarning, Message: "unused"}
	before := []protocol.Diagnostic{e(1, "undefined: y"), warn}
	after := []protocol.Diagnostic{e(2, "undefined: y"), e(5, "undefined: y"), e(7, "cannot use"), warn, warn}
	var got []string
	for _, d := range newErrors(before, after) {
		got = append(got, d.Message)
	}
	if want := "undefined: y|cannot use"; strings.Join(got, "|") != want {
		t.Errorf("newErrors = %q, want %q", strings.Join(got, "|"), want)
	}
}

func TestConfigured(t *testing.T) {
	look := func(name string) (string, error) {
		if name == "gopls" || name == "typescript-language-server" || name == "clangd" {
			return "/opt/" + name, nil
		}
		return "", errors.New("not found")
	}
	for _, tc := range []struct {
		entries []string
		want    string
		warn    int
	}{
		{nil, "gopls:go typescript-language-server:typescript,typescriptreact,javascript,javascriptreact clangd:c,cpp", 0},
		{[]string{"go=/usr/bin/gopls -remote=auto", "c=", "cpp="}, "gopls:go typescript-language-server:typescript,typescriptreact,javascript,javascriptreact", 0},
		{[]string{"python=pylsp", "javascript=", "cobol=x", "nonsense"}, "pylsp:python gopls:go typescript-language-server:typescript,typescriptreact,javascriptreact clangd:c,cpp", 2},
		{[]string{"go=gopls", "off"}, "", 0},
	} {
		servers, warnings := Configured(tc.entries, look)
		var got []string
		for _, s := range servers {
			got = append(got, s.Name+":"+strings.Join(s.Languages, ","))
		}
		if strings.Join(got, " ") != tc.want || len(warnings) != tc.warn {
			t.Errorf("Configured(%q) = %q, %q; want %q and %d warnings", tc.entries, strings.Join(got, " "), warnings, tc.want, tc.warn)
		}
	}
}

// A Go file outside any module is not gopls's: the fallback answers it,
// and no server starts.
func TestOutsideAProject(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "x.go"), []byte("package x\n\nfunc X() {}\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "mod", "sub"), 0o755)
	os.WriteFile(filepath.Join(root, "mod", "go.mod"), []byte("module m\n"), 0o644)
	fb := &fakeNavigator{}
	s := New(Options{Folders: []string{root}, Servers: []Server{{Name: "gopls", Command: []string{"/nonexistent"}, Languages: []string{"go"}}}, Fallback: fb})
	defer s.Close()
	if ans, err := s.Definition(context.Background(), tools.NavQuery{Path: "x.go", Line: 3, Symbol: "X"}); err != nil || ans.Source != "repo map" {
		t.Errorf("Definition(x.go) = %+v, %v; want the fallback's", ans, err)
	}
	if ans, err := s.Introduced(context.Background(), "x.go", ""); err != nil || len(ans.Locations) != 0 {
		t.Errorf("Introduced(x.go) = %+v, %v; want nothing", ans, err)
	}
	if !s.Serves(filepath.Join(root, "mod", "sub", "y.go")) || s.Serves(filepath.Join(root, "x.go")) {
		t.Errorf("Serves: want mod/sub/y.go (below mod/go.mod) and not x.go")
	}
	if n := s.Running(); n != 0 {
		t.Errorf("Running() = %d, want 0", n)
	}
}
