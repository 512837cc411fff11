package repomap

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the expected sections of the golden files under repomap/testdata")

// An archive is a golden file under repomap/testdata: input files as
// sections named by their paths, and expected sections, which -update
// rewrites. In inputs «NUL» stands for a NUL byte, which a text file
// cannot hold.
type archive struct {
	path string
	ar   *txtar.Archive
}

// archives reads repomap/testdata/dir/*.txtar.
func archives(t testing.TB, dir string) []*archive {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden files in repomap/testdata/%s (%v)", dir, err)
	}
	var out []*archive
	for _, p := range paths {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, &archive{path: p, ar: ar})
	}
	return out
}

func (a *archive) name() string { return strings.TrimSuffix(filepath.Base(a.path), ".txtar") }

// inputs are the archive's sections whose names are not in expected.
func (a *archive) inputs(isExpected func(name string) bool) []txtar.File {
	var in []txtar.File
	for _, f := range a.ar.Files {
		if !isExpected(f.Name) {
			in = append(in, txtar.File{Name: f.Name, Data: []byte(strings.ReplaceAll(string(f.Data), "«NUL»", "\x00"))})
		}
	}
	return in
}

// check compares got (section name → text) with the archive, or with
// -update writes it there.
func (a *archive) check(t *testing.T, got map[string]string) {
	t.Helper()
	names := make([]string, 0, len(got))
	for n := range got {
		names = append(names, n)
	}
	slices.Sort(names)
	if *update {
		for _, n := range names {
			a.set(n, got[n])
		}
		if err := os.WriteFile(a.path, txtar.Format(a.ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, n := range names {
		want, ok := a.section(n)
		if !ok {
			t.Errorf("%s: no -- %s -- section (run go test ./repomap -run Golden -update)", a.path, n)
			continue
		}
		if got[n] != want {
			t.Errorf("%s: %s =\n%s\nwant\n%s", a.path, n, got[n], want)
		}
	}
}

func (a *archive) section(name string) (string, bool) {
	for _, f := range a.ar.Files {
		if f.Name == name {
			return string(f.Data), true
		}
	}
	return "", false
}

func (a *archive) set(name, data string) {
	if data != "" && !strings.HasSuffix(data, "\n") {
		data += "\n"
	}
	for i := range a.ar.Files {
		if a.ar.Files[i].Name == name {
			a.ar.Files[i].Data = []byte(data)
			return
		}
	}
	a.ar.Files = append(a.ar.Files, txtar.File{Name: name, Data: []byte(data)})
}

// describe writes what the map holds for each file: its language and
// note, each symbol (line, kind, name, parent, signature) nested as in the
// source, and the references: name×uses(calls).
func describe(files []File) string {
	var b strings.Builder
	for _, f := range files {
		lang := f.Lang
		if lang == "" {
			lang = "-"
		}
		fmt.Fprintf(&b, "%s %s", f.Path, lang)
		if f.Note != "" {
			fmt.Fprintf(&b, " (%s)", f.Note)
		}
		b.WriteString("\n")
		depth := make([]int, len(f.Symbols))
		for i, s := range f.Symbols {
			if s.Container >= 0 {
				depth[i] = depth[s.Container] + 1
			}
			in := ""
			if s.Parent != "" {
				in = " in " + s.Parent
			}
			fmt.Fprintf(&b, "%s%d %s %s%s: %s\n", strings.Repeat("  ", depth[i]+1), s.Line, s.Kind, s.Name, in, s.Signature)
		}
		if len(f.Refs) > 0 {
			line := "  refs:"
			for _, r := range f.Refs {
				w := " " + r.Name
				if r.Count > 1 {
					w += fmt.Sprintf("×%d", r.Count)
				}
				if r.Calls > 0 {
					w += fmt.Sprintf("(%d)", r.Calls)
				}
				if len(line)+len(w) > 100 {
					b.WriteString(line + "\n")
					line = "       "
				}
				line += w
			}
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// Each language's extraction: repomap/testdata/extract/*.txtar hold
// source files; -- symbols -- is what the map finds in them.
func TestGoldenExtract(t *testing.T) {
	for _, a := range archives(t, "extract") {
		t.Run(a.name(), func(t *testing.T) {
			m := New()
			defer m.Close()
			for _, f := range a.inputs(func(n string) bool { return n == "symbols" }) {
				m.Update(f.Name, f.Data)
			}
			a.check(t, map[string]string{"symbols": describe(m.Files())})
		})
	}
}

// The rendered map: repomap/testdata/render/*.txtar hold a project and
// -- render N -- sections, the map at a budget of N bytes, or
// -- render N focus PATH… -- with those files in focus.
func TestGoldenRender(t *testing.T) {
	for _, a := range archives(t, "render") {
		t.Run(a.name(), func(t *testing.T) {
			isExpected := func(n string) bool { return strings.HasPrefix(n, "render ") }
			m := New()
			defer m.Close()
			for _, f := range a.inputs(isExpected) {
				m.Update(f.Name, f.Data)
			}
			got := make(map[string]string)
			for _, f := range a.ar.Files {
				if !isExpected(f.Name) {
					continue
				}
				budget, focus, err := parseRenderName(f.Name)
				if err != nil {
					t.Fatalf("%s: section %q: %v", a.path, f.Name, err)
				}
				m.SetFocus(focus...)
				out := m.Render(budget)
				if len(out) > budget {
					t.Errorf("Render(%d) is %d bytes, over budget", budget, len(out))
				}
				got[f.Name] = out
			}
			a.check(t, got)
		})
	}
}

// parseRenderName reads "render N [focus PATH…]".
func parseRenderName(name string) (budget int, focus []string, err error) {
	f := strings.Fields(name)
	if len(f) < 2 || len(f) == 3 || len(f) > 2 && f[2] != "focus" {
		return 0, nil, fmt.Errorf("want render N [focus PATH…]")
	}
	budget, err = strconv.Atoi(f[1])
	if len(f) > 3 {
		focus = f[3:]
	}
	return budget, focus, err
}
