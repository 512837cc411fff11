package langserver

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/tools"
)

// needGopls returns gopls's path, skipping the test when it is missing,
// unless REIKA_EDITORS=require (CI, after .ci/install-gopls), where a
// missing gopls fails it.
func needGopls(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("gopls")
	if err == nil {
		return path
	}
	const msg = "gopls is not installed (.ci/install-gopls installs it)"
	if os.Getenv("REIKA_EDITORS") == "require" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

const (
	goMod = "module example.com/m\n\ngo 1.22\n"
	aGo   = `package m

// Add returns the sum of a and b.
func Add(a, b int) int {
	return a + b
}
`
	bGo = `package m

func Twice(x int) int {
	return Add(x, x)
}

func Thrice(x int) int {
	return Add(Add(x, x), x)
}
`
)

// cGo has a method.
const cGo = `package m

// Acc accumulates.
type Acc struct{ n int }

// Push adds x.
func (a *Acc) Push(x int) { a.n += x }
`

// goWorkspace writes a module of two files that call across each other
// and returns its root and servers that run gopls on it.
func goWorkspace(t *testing.T, opts Options) (string, *Servers) {
	t.Helper()
	gopls := needGopls(t)
	root := t.TempDir()
	for name, text := range map[string]string{"go.mod": goMod, "a.go": aGo, "b.go": bGo, "c.go": cGo} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts.Folders = []string{root}
	opts.Servers = []Server{{Name: "gopls", Command: []string{gopls}, Languages: []string{"go"}}}
	if opts.Settle == 0 {
		// A first load on a busy machine; the bound itself is tested with
		// the default below.
		opts.Settle = 15 * time.Second
	}
	s := New(opts)
	t.Cleanup(func() { s.Close() })
	return root, s
}

func TestGoplsNavigation(t *testing.T) {
	_, s := goWorkspace(t, Options{})
	ctx := context.Background()

	def, err := s.Definition(ctx, tools.NavQuery{Path: "b.go", Line: 4, Symbol: "Add"})
	if err != nil {
		t.Fatalf("Definition: %v", err)
	}
	if def.Source != "gopls" || def.Approximate || len(def.Locations) != 1 {
		t.Fatalf("Definition = %+v, want one location from gopls", def)
	}
	if l := def.Locations[0]; l.Path != "a.go" || l.Line != 4 || l.Column != 6 || l.Snippet != tools.NavSnippet(aGo, 4, 6, 4) || !strings.Contains(l.Snippet, "return a + b") {
		t.Errorf("Definition's location = %+v, want a.go:4:6 with Add's declaration", l)
	}

	refs, err := s.References(ctx, tools.NavQuery{Path: "a.go", Line: 4, Symbol: "Add"})
	if err != nil {
		t.Fatalf("References: %v", err)
	}
	var got []string
	for _, l := range refs.Locations {
		got = append(got, l.Path+":"+strconv.Itoa(l.Line)+":"+strconv.Itoa(l.Column))
	}
	want := []string{"b.go:4:9", "b.go:8:9", "b.go:8:13"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("References = %s, want %s", strings.Join(got, " "), strings.Join(want, " "))
	}
	// A use shows its declaration's first line, then its own and its
	// neighbours, as the repo map's answers do.
	if len(refs.Locations) == 3 {
		if want := tools.NavUseSnippet(bGo, 7, 9, 8); refs.Locations[1].Snippet != want || !strings.Contains(want, "func Thrice") {
			t.Errorf("the second use's snippet = %q, want %q", refs.Locations[1].Snippet, want)
		}
	}

	hover, err := s.Hover(ctx, tools.NavQuery{Path: "b.go", Line: 4, Column: 9})
	if err != nil {
		t.Fatalf("Hover: %v", err)
	}
	if !strings.Contains(hover.Text, "func Add(a int, b int) int") || !strings.Contains(hover.Text, "Add returns the sum") {
		t.Errorf("Hover = %q, want Add's signature and doc", hover.Text)
	}

	syms, err := s.Symbols(ctx, tools.NavQuery{Path: "b.go"})
	if err != nil {
		t.Fatalf("Symbols: %v", err)
	}
	got = nil
	for _, l := range syms.Locations {
		got = append(got, strconv.Itoa(l.Line)+"-"+strconv.Itoa(l.End)+" "+l.Message)
	}
	if want := []string{"3-5 func Twice(x int) int {", "7-9 func Thrice(x int) int {"}; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Symbols(b.go) =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// By name alone: workspace/symbol finds it, then the question is
	// asked there.
	byName, err := s.Definition(ctx, tools.NavQuery{Symbol: "Thrice"})
	if err != nil || len(byName.Locations) != 1 || byName.Locations[0].Path != "b.go" || byName.Locations[0].Line != 7 {
		t.Errorf("Definition(Thrice by name) = %+v, %v; want b.go:7", byName, err)
	}
}

func TestGoplsIntroduced(t *testing.T) {
	root, s := goWorkspace(t, Options{})
	ctx := context.Background()
	// The first load of the module, outside the bound under test.
	if _, err := s.Diagnostics(ctx, []string{"b.go"}); err != nil {
		t.Fatalf("Diagnostics: %v", err)
	}
	s.opts.Settle = DefaultSettle
	path := filepath.Join(root, "b.go")
	edit := func(old, new string) tools.NavAnswer {
		t.Helper()
		text := strings.Replace(bGo, old, new, 1)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		ans, err := s.Introduced(ctx, "b.go", bGo)
		if err != nil {
			t.Fatalf("Introduced after %q → %q: %v", old, new, err)
		}
		return ans
	}

	ans := edit("return Add(x, x)", `return Add(x, "two")`)
	if ans.Source != "gopls" || len(ans.Locations) != 1 {
		t.Fatalf("Introduced (a string for an int) = %+v, want one error from gopls", ans)
	}
	if l := ans.Locations[0]; l.Path != "b.go" || l.Line != 4 || l.Severity != "error" || !strings.Contains(l.Message, `cannot use "two"`) {
		t.Errorf("the error = %+v, want b.go:4's cannot use \"two\"", l)
	}

	if ans := edit("func Twice(x int) int {", "// Twice doubles x.\nfunc Twice(x int) int {"); len(ans.Locations) != 0 {
		t.Errorf("Introduced (a comment) = %+v, want no error", ans)
	}

	// An error the file had before is not the edit's.
	broken := strings.Replace(bGo, "return Add(x, x)", "return Add(x, y)", 1)
	if err := os.WriteFile(path, []byte(strings.Replace(broken, "func Thrice", "// Thrice.\nfunc Thrice", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if ans, err := s.Introduced(ctx, "b.go", broken); err != nil || len(ans.Locations) != 0 {
		t.Errorf("Introduced (an old error moved down a line) = %+v, %v; want none", ans, err)
	}
}

func TestGoplsIdleAndRestart(t *testing.T) {
	_, s := goWorkspace(t, Options{Idle: 300 * time.Millisecond})
	ctx := context.Background()
	q := tools.NavQuery{Path: "b.go", Line: 4, Symbol: "Add"}
	if _, err := s.Definition(ctx, q); err != nil {
		t.Fatalf("Definition: %v", err)
	}
	if n := s.Running(); n != 1 {
		t.Fatalf("Running() = %d after a question, want 1", n)
	}
	for deadline := time.Now().Add(10 * time.Second); s.Running() != 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("gopls still runs 10 s after its idle bound")
		}
	}
	if ans, err := s.Definition(ctx, q); err != nil || len(ans.Locations) != 1 {
		t.Fatalf("Definition after the idle shutdown = %+v, %v", ans, err)
	}
	if n := s.Running(); n != 1 {
		t.Errorf("Running() = %d after the next question, want 1", n)
	}
}

func TestGoplsCrashRestartsOnceThenGivesUp(t *testing.T) {
	_, s := goWorkspace(t, Options{})
	ctx := context.Background()
	q := tools.NavQuery{Path: "b.go", Line: 4, Symbol: "Add"}
	crash := func() {
		t.Helper()
		if _, err := s.Definition(ctx, q); err != nil {
			t.Fatalf("Definition: %v", err)
		}
		for _, e := range s.running {
			e.mu.Lock()
			// Killed, not waited for: the next question finds it gone
			// or going.
			kill(e.p.cmd)
			<-e.p.life.Done()
			e.mu.Unlock()
		}
	}
	crash()
	crash() // restarted: the question after the first crash was answered
	_, err := s.Definition(ctx, q)
	if err == nil || !strings.Contains(err.Error(), "gopls failed twice") {
		t.Fatalf("Definition after a second crash: %v, want gopls given up", err)
	}
	if n := s.Running(); n != 0 {
		t.Errorf("Running() = %d after giving up, want 0", n)
	}
}

// fakeNavigator answers every question itself, approximately.
type fakeNavigator struct{ asked []string }

func (f *fakeNavigator) answer(what string) (tools.NavAnswer, error) {
	f.asked = append(f.asked, what)
	return tools.NavAnswer{Source: "repo map", Approximate: true}, nil
}
func (f *fakeNavigator) Definition(_ context.Context, q tools.NavQuery) (tools.NavAnswer, error) {
	return f.answer("definition " + q.Path)
}
func (f *fakeNavigator) References(_ context.Context, q tools.NavQuery) (tools.NavAnswer, error) {
	return f.answer("references " + q.Path)
}
func (f *fakeNavigator) Hover(_ context.Context, q tools.NavQuery) (tools.NavAnswer, error) {
	return f.answer("hover " + q.Path)
}
func (f *fakeNavigator) Symbols(_ context.Context, q tools.NavQuery) (tools.NavAnswer, error) {
	return f.answer("symbols " + q.Path)
}
func (f *fakeNavigator) Diagnostics(_ context.Context, paths []string) (tools.NavAnswer, error) {
	return f.answer("diagnostics " + strings.Join(paths, " "))
}

// A file no server serves goes to the fallback, and no server starts.
func TestFallbackWithoutServer(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "x.rb"), []byte("def x; end\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fb := &fakeNavigator{}
	s := New(Options{Folders: []string{root}, Servers: []Server{{Name: "none", Command: []string{"/nonexistent"}, Languages: []string{"go"}}}, Fallback: fb})
	defer s.Close()
	ctx := context.Background()
	ans, err := s.Definition(ctx, tools.NavQuery{Path: "x.rb", Line: 1, Symbol: "x"})
	if err != nil || !ans.Approximate || ans.Source != "repo map" {
		t.Errorf("Definition(x.rb) = %+v, %v; want the fallback's", ans, err)
	}
	s.Symbols(ctx, tools.NavQuery{Symbol: "x"})
	s.Diagnostics(ctx, []string{"x.rb"})
	if got, want := strings.Join(fb.asked, "; "), "definition x.rb; symbols ; diagnostics x.rb"; got != want {
		t.Errorf("the fallback was asked %q, want %q", got, want)
	}
	if ans, err := s.Introduced(ctx, "x.rb", ""); err != nil || len(ans.Locations) != 0 {
		t.Errorf("Introduced(x.rb) = %+v, %v; want nothing", ans, err)
	}
	if n := s.Running(); n != 0 {
		t.Errorf("Running() = %d, want 0", n)
	}
}

// A file the server holds that changed since (on the disk, or in the
// editor) is given to it again before the next question: answers about
// other files come from the text as it is now.
func TestGoplsSeesChangedFiles(t *testing.T) {
	root, s := goWorkspace(t, Options{})
	ctx := context.Background()
	q := tools.NavQuery{Path: "a.go", Line: 4, Symbol: "Add"}
	if _, err := s.Definition(ctx, tools.NavQuery{Path: "b.go", Line: 4, Symbol: "Add"}); err != nil {
		t.Fatalf("Definition: %v", err)
	}
	if err := os.WriteFile(filepath.Join(root, "b.go"), []byte(strings.Replace(bGo, "package m\n", "package m\n\n// Twice and Thrice.\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	refs, err := s.References(ctx, q)
	if err != nil || len(refs.Locations) != 3 || refs.Locations[0].Line != 6 {
		t.Errorf("References after b.go moved down two lines = %+v, %v; want the first at b.go:6", refs, err)
	}
	if err := os.Remove(filepath.Join(root, "b.go")); err != nil {
		t.Fatal(err)
	}
	if refs, err := s.References(ctx, q); err != nil || len(refs.Locations) != 0 {
		t.Errorf("References after b.go was removed = %+v, %v; want none", refs, err)
	}
}

// A server that never answers is given up after its restart, each wait
// bounded, and its processes killed.
func TestHungServerGivenUp(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "x.py"), []byte("x = 1\n"), 0o644)
	s := New(Options{Folders: []string{root}, Timeout: 300 * time.Millisecond,
		Servers: []Server{{Name: "mute", Command: []string{sleep, "60"}, Languages: []string{"python"}}}})
	defer s.Close()
	start := time.Now()
	_, err = s.Hover(context.Background(), tools.NavQuery{Path: "x.py", Line: 1, Symbol: "x"})
	if err == nil || !strings.Contains(err.Error(), "mute failed twice") || !strings.Contains(err.Error(), "did not answer in time") {
		t.Fatalf("Hover on a mute server: %v, want it given up for not answering", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("giving up took %v, want about two timeouts", d)
	}
	// Given up: the next question goes to the fallback (none here).
	if _, err2 := s.Hover(context.Background(), tools.NavQuery{Path: "x.py", Line: 1, Symbol: "x"}); !errors.Is(err2, errNoNavigator) {
		t.Errorf("the next question: %v, want the fallback's", err2)
	}
	if n := s.Running(); n != 0 {
		t.Errorf("Running() = %d, want 0", n)
	}
}

// A server that stops reading blocks a write for good (jsonrpc2 writes
// without heeding a context): the write is bounded all the same, the
// server killed, restarted once, then given up.
func TestWedgedServerGivenUp(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	big := strings.Repeat("x = 1\n", 200_000) // far more than a pipe holds
	os.WriteFile(filepath.Join(root, "x.py"), []byte(big), 0o644)
	s := New(Options{Folders: []string{root}, Timeout: 500 * time.Millisecond, Environ: append(os.Environ(), fakeEnv+"=mute"),
		Servers: []Server{{Name: "wedged", Command: []string{self}, Languages: []string{"python"}}}})
	defer s.Close()
	start := time.Now()
	_, err = s.Hover(context.Background(), tools.NavQuery{Path: "x.py", Line: 1, Symbol: "x"})
	if err == nil || !strings.Contains(err.Error(), "wedged failed twice") || !strings.Contains(err.Error(), "textDocument/didOpen after") {
		t.Fatalf("Hover on a wedged server: %v, want it given up at didOpen", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("giving up took %v, want about two timeouts", d)
	}
}

// An edit that changes a signature breaks its callers in other files:
// their new errors are the edit's too.
func TestGoplsIntroducedInOtherFiles(t *testing.T) {
	root, s := goWorkspace(t, Options{})
	ctx := context.Background()
	if _, err := s.Diagnostics(ctx, []string{"a.go"}); err != nil {
		t.Fatalf("Diagnostics: %v", err)
	}
	s.opts.Settle = DefaultSettle
	if err := os.WriteFile(filepath.Join(root, "a.go"), []byte(strings.Replace(aGo, "Add(a, b int)", "Add(a, b, c int)", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ans, err := s.Introduced(ctx, "a.go", aGo)
	if err != nil {
		t.Fatalf("Introduced: %v", err)
	}
	var got []string
	for _, l := range ans.Locations {
		got = append(got, l.Path+":"+strconv.Itoa(l.Line)+" "+strings.SplitN(l.Message, "\n", 2)[0])
	}
	want := []string{"b.go:4 not enough arguments in call to Add", "b.go:8 not enough arguments in call to Add", "b.go:8 not enough arguments in call to Add"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Introduced (a parameter added) =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The navigation tools name a symbol without its line: in a file, or
// alone, a method as Type.method.
func TestGoplsBySymbol(t *testing.T) {
	_, s := goWorkspace(t, Options{})
	ctx := context.Background()
	for _, tc := range []struct {
		q    tools.NavQuery
		want string
	}{
		{tools.NavQuery{Path: "a.go", Symbol: "Add"}, "a.go:4:6"},
		{tools.NavQuery{Path: "b.go", Symbol: "Add"}, "a.go:4:6"}, // its first use there
		{tools.NavQuery{Symbol: "Acc.Push"}, "c.go:7:15"},
		{tools.NavQuery{Symbol: "Push"}, "c.go:7:15"},
		{tools.NavQuery{Path: "c.go", Line: 7, Symbol: "Acc.Push"}, "c.go:7:15"},
	} {
		ans, err := s.Definition(ctx, tc.q)
		if err != nil || len(ans.Locations) != 1 || ans.Source != "gopls" {
			t.Errorf("Definition(%+v) = %+v, %v; want %s from gopls", tc.q, ans, err, tc.want)
			continue
		}
		l := ans.Locations[0]
		if got := l.Path + ":" + strconv.Itoa(l.Line) + ":" + strconv.Itoa(l.Column); got != tc.want {
			t.Errorf("Definition(%+v) = %s, want %s", tc.q, got, tc.want)
		}
	}
	hover, err := s.Hover(ctx, tools.NavQuery{Symbol: "Acc.Push"})
	if err != nil || !strings.Contains(hover.Text, "func (a *Acc) Push(x int)") {
		t.Errorf("Hover(Acc.Push) = %q, %v; want its signature", hover.Text, err)
	}
}

// A definition outside the workspace (the standard library) is given by
// its place alone: its lines are not the agent's to read.
func TestGoplsOutsideTheWorkspace(t *testing.T) {
	root, s := goWorkspace(t, Options{})
	os.WriteFile(filepath.Join(root, "d.go"), []byte("package m\n\nimport \"strings\"\n\nvar up = strings.ToUpper(\"x\")\n"), 0o644)
	ans, err := s.Definition(context.Background(), tools.NavQuery{Path: "d.go", Line: 5, Symbol: "ToUpper"})
	if err != nil || len(ans.Locations) != 1 {
		t.Fatalf("Definition(strings.ToUpper) = %+v, %v", ans, err)
	}
	if l := ans.Locations[0]; !filepath.IsAbs(l.Path) || !strings.HasSuffix(l.Path, "strings.go") || l.Snippet != "" {
		t.Errorf("the standard library's place = %+v, want an absolute path and no lines", l)
	}
}
