package repomap

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/reika-lsp/reika/internal/testslow"
)

// corpus is every input file of the golden archives, under a directory
// per archive so that paths do not collide.
func corpus(t testing.TB) []txtar.File {
	t.Helper()
	var all []txtar.File
	for _, dir := range []string{"extract", "render"} {
		for _, a := range archives(t, dir) {
			for _, f := range a.inputs(func(n string) bool { return n == "symbols" || strings.HasPrefix(n, "render ") }) {
				all = append(all, txtar.File{Name: a.name() + "/" + f.Name, Data: f.Data})
			}
		}
	}
	return all
}

func build(files []txtar.File) *Map {
	m := New()
	for _, f := range files {
		m.Update(f.Name, f.Data)
	}
	return m
}

// lines is a map's lines but the last one that counts what is left out.
func lines(out string) []string {
	if out == "" {
		return nil
	}
	ls := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if n := len(ls); strings.HasPrefix(ls[n-1], "(not shown") {
		ls = ls[:n-1]
	}
	return ls
}

// For every budget from 0 to past the whole map (every fifth by default,
// every one under the build tag long): the map fits, and a larger budget
// never drops a line a smaller one had.
func TestRenderEveryBudget(t *testing.T) {
	step := 5
	if testslow.Long {
		step = 1
	}
	files := corpus(t)
	for _, focus := range [][]string{nil, {files[0].Name, files[len(files)-1].Name}} {
		m := build(files)
		m.SetFocus(focus...)
		full := m.Render(1 << 30)
		if strings.Contains(full, "(not shown") {
			t.Fatalf("Render(1<<30) left something out:\n%s", full)
		}
		if got := m.Render(len(full)); got != full {
			t.Errorf("Render(%d) = %d bytes, want the whole map", len(full), len(got))
		}
		if got := m.Render(len(full) - 1); got == full {
			t.Errorf("Render(%d) is the whole map of %d bytes", len(full)-1, len(full))
		}
		for _, b := range []int{-1, -1 << 40} {
			if got := m.Render(b); got != "" {
				t.Errorf("Render(%d) = %q, want \"\"", b, got)
			}
		}
		prev := map[string]bool{}
		for b := 0; b <= len(full)+1; b += step {
			out := m.Render(b)
			if len(out) > b {
				t.Fatalf("Render(%d) is %d bytes", b, len(out))
			}
			cur := map[string]bool{}
			for _, l := range lines(out) {
				cur[l] = true
			}
			for l := range prev {
				if !cur[l] {
					t.Fatalf("Render(%d) dropped %q, which Render(%d) had", b, l, b-1)
				}
			}
			prev = cur
		}
		m.Close()
	}
}

// The same files give the same bytes whatever order they were added in,
// and however they got to their content.
func TestRenderDeterministic(t *testing.T) {
	files := corpus(t)
	m1 := build(files)
	defer m1.Close()
	m1.SetFocus(files[3].Name)

	rev := slices.Clone(files)
	slices.Reverse(rev)
	shuffled := slices.Clone(files)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })

	for name, order := range map[string][]txtar.File{"reversed": rev, "shuffled": shuffled} {
		m2 := New()
		// A detour: each file first with other content, then its own,
		// and one file that comes and goes.
		for _, f := range order {
			m2.Update(f.Name, append([]byte("// earlier\n"), f.Data[:len(f.Data)/2]...))
		}
		m2.Update("gone.go", []byte("package gone\nfunc Gone() {}\n"))
		for _, f := range order {
			m2.Update(f.Name, f.Data)
		}
		m2.Remove("gone.go")
		m2.SetFocus(files[3].Name)
		for _, b := range []int{0, 150, 700, 3200, 6400, 1 << 20} {
			if got, want := m2.Render(b), m1.Render(b); got != want {
				t.Errorf("%s: Render(%d) =\n%s\nwant\n%s", name, b, got, want)
			}
		}
		m2.Close()
	}
}

// Fuzz one more file into the golden project: whatever it holds, the map
// fits its budget and does not depend on the order files were added in.
func FuzzRender(f *testing.F) {
	f.Add([]byte("package x\nfunc Run() {}\n"), uint8(0), 300)
	f.Add([]byte("class A:\n  def b(self): pass\n"), uint8(1), 0)
	f.Add([]byte("export const a = () => 1;\n}}}{{{"), uint8(2), 1000)
	f.Add([]byte("interface I { x: number }\n"), uint8(3), 57)
	f.Add([]byte("impl X for Y { fn f() {} }"), uint8(5), 12000)
	f.Add([]byte("\x00\x01\x02"), uint8(6), 5)
	f.Add([]byte(strings.Repeat("func(){", 500)), uint8(2), 2000)
	f.Add([]byte("class A { @Override void b() {} }"), uint8(7), 400)
	f.Add([]byte("#ifdef X\nint f(void) {\n#else\nint g(void);\n#endif\n}"), uint8(8), 300)
	f.Add([]byte("namespace n { class C { int f(); }; }\nint n::C::f() { return 0; }"), uint8(9), 300)
	f.Add([]byte("namespace N; [A] class C { void M() => x; }"), uint8(10), 300)
	f.Add([]byte("class A::B < C\n  def f? = 1\n=begin\nx\n"), uint8(11), 300)
	f.Add([]byte("<?php #[A] class C { function f() {} } ?><p>"), uint8(12), 300)
	f.Add([]byte("f() { g \"$(h)\" 'it\\'; }\nX=1"), uint8(13), 300)
	exts := []string{".go", ".py", ".js", ".ts", ".tsx", ".rs", ".txt", ".java", ".c", ".h", ".cs", ".rb", ".php", ".sh"}
	var files []txtar.File
	for _, a := range archives(f, "render") {
		files = append(files, a.inputs(func(n string) bool { return strings.HasPrefix(n, "render ") })...)
	}
	f.Fuzz(func(t *testing.T, content []byte, ext uint8, budget int) {
		name := "fuzz/file" + exts[int(ext)%len(exts)]
		m1 := build(files)
		defer m1.Close()
		m1.Update(name, content)
		m2 := New()
		defer m2.Close()
		m2.Update(name, content)
		for i := len(files) - 1; i >= 0; i-- {
			m2.Update(files[i].Name, files[i].Data)
		}
		out := m1.Render(budget)
		if len(out) > max(budget, 0) {
			t.Fatalf("Render(%d) is %d bytes", budget, len(out))
		}
		if out2 := m2.Render(budget); out2 != out {
			t.Fatalf("Render(%d) depends on the order files were added:\n%s\nthen\n%s", budget, out, out2)
		}
	})
}
