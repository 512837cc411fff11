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

// A place on a line holding non-ASCII text, in each encoding a server
// may agree on: é is 2 bytes, 😀 4 bytes, 2 UTF-16 units and 1 code point.
func TestPosition(t *testing.T) {
	text := "package m\n\tx := \"é😀\" + Add(Adder, Add)\n"
	for _, tc := range []struct {
		line, col int
		symbol    string
		want      [3]uint32 // by encoding: UTF-16, UTF-8, UTF-32
		err       bool
	}{
		{line: 2, symbol: "Add", want: [3]uint32{14, 17, 13}},
		{line: 2, symbol: "Adder", want: [3]uint32{18, 21, 17}},
		{line: 2, col: 18, want: [3]uint32{14, 17, 13}},
		{line: 1, symbol: "Add", err: true},
		{line: 0, symbol: "Add", err: true},
	} {
		for _, enc := range []encoding{encUTF16, encUTF8, encUTF32} {
			got, err := position(text, tc.line, tc.col, tc.symbol, enc)
			want := protocol.Position{Line: uint32(tc.line - 1), Character: tc.want[enc]}
			if (err != nil) != tc.err || err == nil && got != want {
				t.Errorf("position(%d, %d, %q, %s) = %v, %v; want %v (error %v)", tc.line, tc.col, tc.symbol, enc, got, err, want, tc.err)
			}
		}
	}
	line := lineOf(text, 1)
	for _, enc := range []encoding{encUTF16, encUTF8, encUTF32} {
		for col := range len(line) + 1 {
			if col < len(line) && !isRuneStart(line[col]) {
				continue
			}
			if back := byteCol(line, units(line, col, enc), enc); back != col {
				t.Errorf("byteCol(units(%d, %s)) = %d", col, enc, back)
			}
		}
		// A column inside a character is the character's start.
		if got := byteCol(line, units(line, 9, enc)+1, enc); enc != encUTF32 && got != 9 {
			t.Errorf("byteCol inside 😀 (%s) = %d, want 9", enc, got)
		}
	}
}

// The client offers UTF-8 and UTF-16 (general.positionEncodings) in its
// initialize, and reads the server's choice.
func TestPositionEncodingOffered(t *testing.T) {
	b, err := json.Marshal(initializeParams{Capabilities: clientCapabilities{General: &generalCapabilities{PositionEncodings: offeredEncodings}}})
	if err != nil || !strings.Contains(string(b), `"capabilities":{"general":{"positionEncodings":["utf-8","utf-16"]}`) {
		t.Errorf("initialize's params = %s, %v; want general.positionEncodings in capabilities", b, err)
	}
	var res initializeResult
	if err := json.Unmarshal([]byte(`{"capabilities":{"positionEncoding":"utf-8","hoverProvider":true}}`), &res); err != nil || parseEncoding(res.Capabilities.PositionEncoding) != encUTF8 {
		t.Errorf("the server's utf-8 read as %v, %v", res, err)
	}
	if parseEncoding("") != encUTF16 {
		t.Errorf("no positionEncoding is not UTF-16")
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

// negotiated is the position encoding the server named runs with in
// folder, after a question started it.
func negotiated(t *testing.T, s *Servers, folder, server string) encoding {
	t.Helper()
	s.mu.Lock()
	e := s.running[runKey{folder, server}]
	s.mu.Unlock()
	if e == nil {
		t.Fatalf("%s does not run in %s", server, folder)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.p == nil {
		t.Fatalf("%s has no process in %s", server, folder)
	}
	return e.p.enc
}

// A server that counts in bytes says so when offered (positionEncoding
// "utf-8"), and a place after non-ASCII text on its line goes to it and
// comes back in bytes: in UTF-16 the server would find no name there.
func TestPositionEncodingNegotiated(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	const intl = "greeting, total = \"é😀\", add(1, 2)\n"
	if err := os.WriteFile(filepath.Join(root, "intl.py"), []byte(intl), 0o644); err != nil {
		t.Fatal(err)
	}
	s := New(Options{Folders: []string{root}, Environ: append(os.Environ(), fakeEnv+"=bytes"),
		Servers: []Server{{Name: "bytes", Command: []string{self}, Languages: []string{"python"}}}})
	defer s.Close()
	// add is at byte 28 of line 1 (UTF-16 unit 25): column 29; column 31
	// is inside it.
	def, err := s.Definition(context.Background(), tools.NavQuery{Path: "intl.py", Line: 1, Column: 31})
	if err != nil || len(def.Locations) != 1 || def.Locations[0].Column != 29 {
		t.Fatalf("Definition at intl.py:1:31 = %+v, %v; want intl.py:1:29", def, err)
	}
	if enc := negotiated(t, s, root, "bytes"); enc != encUTF8 {
		t.Errorf("the server runs with %s positions, want utf-8", enc)
	}
}
