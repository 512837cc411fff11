package repomap

import (
	"bytes"
	"path"
	"slices"
	"strings"
)

// Navigation: what the map's index can say of a name without a language
// server. A definition is found by name, not by type (two methods named
// Run are both Run's definitions), and a reference is the name written
// outside comments and strings in a file that uses it; the answers are
// approximate, and the caller says so. The map holds, for each file, its
// symbols and the names it uses (with counts, for ranking), not the
// places it uses them: the caller reads the files that use a name and
// finds them with Occurrences, so the map stays as small as ranking needs.

// A Definition is a symbol and the file that defines it.
type Definition struct {
	Path string
	Symbol
}

// Definitions returns the symbols that define name, sorted by path and
// line; a Go spec that defines several names is found by each. A name
// qualified by its parent ("Session.Run", "Session::run") finds the
// symbols of that parent, or at the top level of a package or module of
// that name ("store.Open": a file in a directory store, or store.py);
// when none is, the name alone: an approximate answer that offers what
// there is rather than nothing.
func (m *Map) Definitions(name string) []Definition {
	parent, base := splitQualified(name)
	if base == "" {
		return nil
	}
	named := func(s *sym) bool {
		for n := range s.defines() {
			if n == base {
				return true
			}
		}
		return false
	}
	if parent != "" {
		if defs := m.definitions(func(p string, s *sym) bool { return named(s) && inParent(p, s, parent) }); len(defs) > 0 {
			return defs
		}
	}
	return m.definitions(func(_ string, s *sym) bool { return named(s) })
}

// inParent reports whether s, in the file at p, belongs to parent: its
// class or receiver, or the package (directory) or module (file) that
// holds it at the top level.
func inParent(p string, s *sym, parent string) bool {
	if s.Parent != "" {
		return s.Parent == parent
	}
	stem := strings.TrimSuffix(path.Base(p), path.Ext(p))
	return path.Base(path.Dir(p)) == parent || stem == parent
}

// Match returns the definitions whose name contains query, ignoring
// case, sorted by path and line.
func (m *Map) Match(query string) []Definition {
	q := strings.ToLower(strings.TrimSpace(query))
	if q == "" {
		return nil
	}
	return m.definitions(func(_ string, s *sym) bool {
		return s.Kind != Impl && strings.Contains(strings.ToLower(s.Name), q)
	})
}

// definitions returns the symbols keep takes, sorted by path and line.
func (m *Map) definitions(keep func(path string, s *sym) bool) []Definition {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Definition
	for _, f := range m.sorted() {
		for i := range f.syms {
			if keep(f.path, &f.syms[i]) {
				out = append(out, Definition{Path: f.path, Symbol: f.syms[i].Symbol})
			}
		}
	}
	return out
}

// splitQualified splits "Parent.name" (or "Parent::name", "Parent#name",
// Go's "(*Parent).name") into its parent and name; an unqualified name
// has no parent.
func splitQualified(name string) (parent, base string) {
	name = strings.TrimSpace(name)
	for _, sep := range []string{"::", ".", "#"} {
		if i := strings.LastIndex(name, sep); i >= 0 {
			return strings.Trim(name[:i], "(*)"), name[i+len(sep):]
		}
	}
	return "", name
}

// File returns what the map holds for path, and false when it holds
// nothing.
func (m *Map) File(path string) (File, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.files[path]
	if f == nil {
		return File{}, false
	}
	ff := File{Path: f.path, Note: f.note, Refs: f.refs}
	if f.lang != nil {
		ff.Lang = f.lang.name
	}
	for _, s := range f.syms {
		ff.Symbols = append(ff.Symbols, s.Symbol)
	}
	return ff, true
}

// Users returns the paths of the files that use name (those that define
// it among them: a definition writes its name), sorted.
func (m *Map) Users(name string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, f := range m.sorted() {
		if _, ok := slices.BinarySearchFunc(f.refs, name, func(r Ref, n string) int { return strings.Compare(r.Name, n) }); ok {
			out = append(out, f.path)
		}
	}
	return out
}

// An Occurrence is where an identifier is written: its 1-based line and
// 1-based byte column.
type Occurrence struct{ Line, Column int }

// Occurrences returns where name is written in src, the content of the
// file at path (its extension gives the language), outside comments and
// string literals, in order; nil for a file the map does not parse.
func Occurrences(path string, src []byte, name string) []Occurrence {
	l := languageFor(path)
	if l == nil || name == "" {
		return nil
	}
	var out []Occurrence
	line, lineStart, counted := 1, 0, 0
	scan(l.lex, src, func(at, end int) {
		if string(src[at:end]) != name {
			return
		}
		for ; counted < at; counted++ {
			if src[counted] == '\n' {
				line, lineStart = line+1, counted+1
			}
		}
		out = append(out, Occurrence{Line: line, Column: at - lineStart + 1})
	})
	return out
}

// IdentAt returns the identifier written at line and column (1-based,
// in bytes) of src, the content of the file at path, outside comments
// and string literals: the one that covers the column, else the first
// on the line when column is 0. One written after another and a "." or
// "::" comes with it, as Definitions takes a qualified name: store.Open,
// s.Close. It returns "" when there is none, or the map does not parse
// the file's language.
func IdentAt(path string, src []byte, line, column int) string {
	l := languageFor(path)
	if l == nil || line < 1 {
		return ""
	}
	start := 0
	for n := 1; n < line; n++ {
		i := bytes.IndexByte(src[start:], '\n')
		if i < 0 {
			return ""
		}
		start += i + 1
	}
	end := len(src)
	if i := bytes.IndexByte(src[start:], '\n'); i >= 0 {
		end = start + i
	}
	var found string
	prevAt, prevEnd := -1, -1
	scan(l.lex, src[:end], func(at, e int) {
		defer func() { prevAt, prevEnd = at, e }()
		if found != "" || e <= start || l.keyword[string(src[at:e])] {
			return
		}
		if column == 0 || at-start < column && column <= e-start+1 {
			found = string(src[at:e])
			if sep := string(src[max(prevEnd, 0):at]); prevAt >= start && (sep == "." || sep == "::") {
				found = string(src[prevAt:e])
			}
		}
	})
	return found
}
