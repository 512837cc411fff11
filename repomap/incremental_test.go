package repomap

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	ts "github.com/tree-sitter/go-tree-sitter"
)

// edits are changes a user might make, as functions of the content.
var edits = []struct {
	name string
	edit func([]byte) []byte
}{
	{"type a character in the middle", func(b []byte) []byte { return splice(b, len(b)/2, 0, "x") }},
	{"delete a character in the middle", func(b []byte) []byte { return splice(b, len(b)/2, 1, "") }},
	{"insert a blank line at the top", func(b []byte) []byte { return splice(b, 0, 0, "\n") }},
	{"delete the first line", func(b []byte) []byte {
		i := bytes.IndexByte(b, '\n')
		return splice(b, 0, i+1, "")
	}},
	{"append a line", func(b []byte) []byte { return append(bytes.Clone(b), "\n// more\n"...) }},
	{"duplicate the second half", func(b []byte) []byte { return append(bytes.Clone(b), b[len(b)/2:]...) }},
	{"cut the last third", func(b []byte) []byte { return bytes.Clone(b[:len(b)*2/3]) }},
	{"rename at a line start", func(b []byte) []byte {
		i := bytes.LastIndex(b[:len(b)/2], []byte("\n"))
		return splice(b, i+1, 0, "renamed_")
	}},
	{"insert a multibyte rune", func(b []byte) []byte { return splice(b, len(b)/3, 0, "é€") }},
	{"open a brace at a line start mid-file", func(b []byte) []byte {
		i := bytes.LastIndex(b[:len(b)/2], []byte("\n"))
		return splice(b, i+1, 0, "{\n")
	}},
	{"type right after the first closing brace", func(b []byte) []byte {
		i := bytes.IndexByte(b, '}')
		return splice(b, i+1, 0, "x")
	}},
	{"type right before the last line", func(b []byte) []byte {
		i := bytes.LastIndex(bytes.TrimRight(b, "\n"), []byte("\n"))
		return splice(b, i+1, 0, "y")
	}},
	{"join two lines", func(b []byte) []byte {
		i := bytes.IndexByte(b[len(b)/3:], '\n')
		return splice(b, len(b)/3+i, 1, " ")
	}},
	{"replace all", func(b []byte) []byte { return []byte("x = 1\n") }},
	{"empty", func(b []byte) []byte { return nil }},
}

func splice(b []byte, at, del int, ins string) []byte {
	at = min(max(at, 0), len(b))
	del = min(del, len(b)-at)
	out := append(bytes.Clone(b[:at]), ins...)
	return append(out, b[at+del:]...)
}

// An Update that reuses the previous tree finds what a fresh parse of the
// same content finds, edit after edit.
func TestIncrementalMatchesFresh(t *testing.T) {
	for _, f := range corpus(t) {
		t.Run(f.Name, func(t *testing.T) {
			inc := New()
			defer inc.Close()
			inc.Update(f.Name, f.Data)
			content := f.Data
			for _, e := range edits {
				content = e.edit(content)
				inc.Update(f.Name, content)
				fresh := New()
				fresh.Update(f.Name, content)
				if diff := cmp.Diff(fresh.Files(), inc.Files()); diff != "" {
					t.Errorf("after %q: Files() differs from a fresh parse (-fresh +incremental):\n%s", e.name, diff)
				}
				fresh.Close()
				// Back to the original, incrementally too.
				inc.Update(f.Name, f.Data)
				content = f.Data
			}
		})
	}
}

// The same, with the edits piling up instead of each undone.
func TestIncrementalCumulative(t *testing.T) {
	for _, f := range corpus(t) {
		t.Run(f.Name, func(t *testing.T) {
			inc := New()
			defer inc.Close()
			content := f.Data
			inc.Update(f.Name, content)
			for round := range 3 {
				for _, e := range edits[:len(edits)-2] {
					content = e.edit(content)
					inc.Update(f.Name, content)
					fresh := New()
					fresh.Update(f.Name, content)
					if diff := cmp.Diff(fresh.Files(), inc.Files()); diff != "" {
						t.Fatalf("round %d, after %q: Files() differs from a fresh parse (-fresh +incremental):\n%s", round, e.name, diff)
					}
					fresh.Close()
				}
			}
		})
	}
}

// diffEdit's edit turns old into new, and its positions are where those
// bytes are.
func TestDiffEdit(t *testing.T) {
	for _, tc := range []struct{ old, new string }{
		{"", "a"},
		{"a", ""},
		{"abc", "abc"},
		{"abc", "abxc"},
		{"line1\nline2\n", "line1\nline 2\n"},
		{"a\nb\nc", "a\nc"},
		{"aaaa", "aaaaa"},
		{"x\n", "\nx\n"},
		{"héllo", "hèllo"}, // é and è share their first byte
		{"日本", "日本語"},
		{strings.Repeat("a", 1000) + "X" + strings.Repeat("b", 1000), strings.Repeat("a", 1000) + strings.Repeat("b", 1000)},
	} {
		e, changed := diffEdit([]byte(tc.old), []byte(tc.new))
		if changed != (tc.old != tc.new) {
			t.Errorf("diffEdit(%q, %q) changed = %v", tc.old, tc.new, changed)
			continue
		}
		if !changed {
			continue
		}
		got := tc.old[:e.StartByte] + tc.new[e.StartByte:e.NewEndByte] + tc.old[e.OldEndByte:]
		if got != tc.new {
			t.Errorf("diffEdit(%q, %q) = %+v, which makes %q", tc.old, tc.new, e, got)
		}
		for _, p := range []struct {
			text string
			at   uint
			pt   ts.Point
		}{
			{tc.old, e.StartByte, e.StartPosition},
			{tc.old, e.OldEndByte, e.OldEndPosition},
			{tc.new, e.NewEndByte, e.NewEndPosition},
		} {
			if want := pointAt([]byte(p.text[:p.at])); p.pt != want {
				t.Errorf("diffEdit(%q, %q): point at byte %d = %+v, want %+v", tc.old, tc.new, p.at, p.pt, want)
			}
		}
		for _, at := range []uint{e.StartByte, e.OldEndByte} {
			if int(at) < len(tc.old) && tc.old[at]&0xC0 == 0x80 {
				t.Errorf("diffEdit(%q, %q) = %+v cuts a rune at %d", tc.old, tc.new, e, at)
			}
		}
	}
}

// Broken input degrades to a note, never a crash.
func TestNotes(t *testing.T) {
	const stmt = "var a=function(b){return b};"
	minified := strings.Repeat(stmt, 200)
	for _, tc := range []struct {
		path    string
		content string
		note    string
	}{
		{"big.go", "package big\n" + strings.Repeat("var x = 1\n", MaxParseBytes/10), NoteTooLarge},
		{"bin.py", "abc\x00def", NoteBinary},
		{"bin.txt", "\x00", NoteBinary},
		{"min.js", minified, NoteMinified},
		{"short.js", strings.Repeat(stmt, (minifiedMin-1)/len(stmt)), ""},
		{"bad.go", "package p\nfunc (", NoteSyntaxErrors},
		{"latin1.py", "x = '\xe9'\n", ""},
		{"empty.rs", "", ""},
		{"ok.go", "package p\n", ""},
	} {
		m := New()
		m.Update(tc.path, []byte(tc.content))
		if got := m.Files()[0].Note; got != tc.note {
			t.Errorf("Update(%q, …) note = %q, want %q", tc.path, got, tc.note)
		}
		if out := m.Render(1000); len(out) > 1000 || !strings.HasPrefix(out, tc.path) {
			t.Errorf("Render after Update(%q, …) = %q", tc.path, out)
		}
		m.Close()
	}
}

// A Map is safe for concurrent use.
func TestConcurrent(t *testing.T) {
	m := New()
	defer m.Close()
	files := corpus(t)
	done := make(chan bool)
	for w := range 4 {
		go func() {
			defer func() { done <- true }()
			for i, f := range files {
				if i%4 == w {
					m.Update(f.Name, f.Data)
					m.Render(2000)
					m.Files()
					m.SetFocus(f.Name)
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
	if got := len(m.Files()); got != len(files) {
		t.Errorf("len(Files()) = %d, want %d", got, len(files))
	}
}

// Remove drops a file; Close empties the map, which still works after.
func TestRemoveClose(t *testing.T) {
	m := New()
	m.Update("a.go", []byte("package a\nfunc A() {}\n"))
	m.Update("b.go", []byte("package a\nfunc B() { A() }\n"))
	m.Remove("a.go")
	m.Remove("never.go")
	if got := m.Render(1000); got != "b.go\n  2: func B()\n" {
		t.Errorf("Render after Remove = %q", got)
	}
	m.Close()
	if got := m.Render(1000); got != "" {
		t.Errorf("Render after Close = %q, want \"\"", got)
	}
	m.Update("c.py", []byte("def c(): pass\n"))
	if got := m.Render(1000); got != "c.py\n  1: def c()\n" {
		t.Errorf("Render after Close and Update = %q", got)
	}
	m.Close()
}

// The map keeps the trees of the files updated last; a file whose tree
// was dropped is parsed whole on its next change, with the same result.
func TestKeepTrees(t *testing.T) {
	m := New()
	defer m.Close()
	src := func(i int) []byte {
		return fmt.Appendf(nil, "package p\n\nfunc F%d() int { return %d }\n", i, i)
	}
	for i := range keepTrees + 10 {
		m.Update(fmt.Sprintf("f%d.go", i), src(i))
	}
	count := func() int {
		n := 0
		for _, f := range m.files {
			if f.tree != nil {
				n++
			}
		}
		return n
	}
	if got := count(); got != keepTrees || m.trees != keepTrees {
		t.Errorf("after %d files: %d trees (counted %d), want %d", keepTrees+10, got, m.trees, keepTrees)
	}
	if m.files["f0.go"].tree != nil || m.files[fmt.Sprintf("f%d.go", keepTrees+9)].tree == nil {
		t.Errorf("the oldest file kept its tree, or the newest lost it")
	}
	changed := append(src(0), "\nfunc G() {}\n"...)
	m.Update("f0.go", changed)
	fresh := New()
	defer fresh.Close()
	fresh.Update("f0.go", changed)
	got, want := m.Files()[0], fresh.Files()[0]
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("f0.go after its tree was dropped (-fresh +got):\n%s", diff)
	}
	if got := count(); got != keepTrees || m.trees != keepTrees {
		t.Errorf("after an update: %d trees (counted %d), want %d", got, m.trees, keepTrees)
	}
	m.Remove("f0.go")
	if got := count(); got != keepTrees-1 || m.trees != keepTrees-1 {
		t.Errorf("after a remove: %d trees (counted %d), want %d", got, m.trees, keepTrees-1)
	}
}

// Fuzz a change from one content to another: the incremental result is
// the fresh one.
func FuzzIncremental(f *testing.F) {
	for _, file := range corpus(f) {
		if len(file.Data) < 4000 {
			f.Add(file.Data, splice(file.Data, len(file.Data)/2, 3, "}{"), uint8(len(file.Name)))
		}
	}
	exts := []string{".go", ".py", ".js", ".ts", ".tsx", ".rs", ".java", ".c", ".cpp", ".cs", ".rb", ".php", ".sh"}
	f.Fuzz(func(t *testing.T, old, new []byte, ext uint8) {
		name := "f" + exts[int(ext)%len(exts)]
		inc := New()
		defer inc.Close()
		inc.Update(name, old)
		inc.Update(name, new)
		fresh := New()
		defer fresh.Close()
		fresh.Update(name, new)
		if diff := cmp.Diff(fresh.Files(), inc.Files()); diff != "" {
			t.Errorf("%q → %q: (-fresh +incremental)\n%s", old, new, diff)
		}
	})
}

// Garbage that sends the parser into error recovery at every token is cut
// off by the time limit, not waited for.
func TestPathological(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("{}()[]<>;:,.=+-*/'\"`#abcXYZ012 \n\t\\$@!?|&^%~")
	garbage := make([]byte, 400<<10)
	for i := range garbage {
		garbage[i] = alphabet[r.IntN(len(alphabet))]
	}
	for _, ext := range []string{".go", ".py", ".js", ".ts", ".tsx", ".rs", ".java", ".c", ".cpp", ".cs", ".rb", ".php", ".sh"} {
		m := New()
		start := time.Now()
		m.Update("garbage"+ext, garbage)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Update(garbage%s) took %v", ext, d)
		}
		if note := m.Files()[0].Note; note != NoteTimedOut && note != NoteSyntaxErrors {
			t.Errorf("Update(garbage%s) note = %q, want %q or %q", ext, note, NoteTimedOut, NoteSyntaxErrors)
		}
		// The parser is ready for the next file.
		m.Update("ok"+ext, nil)
		if note := m.Files()[1].Note; note != "" {
			t.Errorf("after garbage%s, Update(ok%s, nil) note = %q", ext, ext, note)
		}
		m.Close()
	}
}
