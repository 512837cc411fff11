package repomap

import (
	"bytes"
	"hash/maphash"
	"iter"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	ts "github.com/tree-sitter/go-tree-sitter"
)

// Limits on what is parsed. A file over MaxParseBytes, or that looks
// binary or minified, is listed by name with a note; a parse that runs
// over parseTimeout is abandoned the same way.
const (
	MaxParseBytes = 512 << 10
	parseTimeout  = 500_000 // microseconds

	// A file of at least minifiedMin bytes whose lines average more than
	// minifiedLine bytes is taken for minified or generated code.
	minifiedMin  = 2048
	minifiedLine = 300
	// binarySniff bytes are checked for a NUL, as git does.
	binarySniff = 8000
	// chunkSize is the most text handed to the parser at once.
	chunkSize = 64 << 10
	// keepTrees is how many syntax trees the map keeps, those of the files
	// updated last: the files being edited. A tree costs some 30 times its
	// file's size in C memory; a file without one keeps no copy of its
	// content either, is parsed whole on its next change, and keeps its
	// tree from then on.
	keepTrees = 8
)

// Why a file has no symbols, or only some.
const (
	NoteSyntaxErrors = "syntax errors" // parsed with errors: the symbols found around them
	NoteBinary       = "binary"        // a NUL byte near the start
	NoteMinified     = "minified"      // very long lines on average
	NoteTooLarge     = "too large"     // over MaxParseBytes
	NoteTimedOut     = "parse timed out"
	NoteNoGrammar    = "grammar not loaded" // the bindings refused the grammar: a build problem
)

// A Kind is what a symbol defines.
type Kind string

// The kinds of symbol.
const (
	Func      Kind = "func"
	Method    Kind = "method"
	Type      Kind = "type"
	Class     Kind = "class"
	Interface Kind = "interface"
	Struct    Kind = "struct"
	Enum      Kind = "enum"
	Trait     Kind = "trait"
	Impl      Kind = "impl" // a Rust impl block: its methods nest in it; it defines no name
	Module    Kind = "module"
	Const     Kind = "const"
	Var       Kind = "var"
	Macro     Kind = "macro"
)

// A Symbol is one definition in a file.
type Symbol struct {
	Kind Kind
	// Name is the defined name; a Go spec that defines several names at
	// once has them all, comma-separated ("C, D").
	Name string
	// Parent is the receiver, class, trait, impl or module the symbol
	// belongs to, "" at the top level.
	Parent string
	// Container is the index in File.Symbols of the symbol this one is
	// written inside (a class, impl, trait or module), or -1. A Go method
	// has a Parent but no Container.
	Container int
	// Line is the 1-based line of the definition; End is the last line
	// of its declaration (its body included), which a navigation answer
	// shows.
	Line, End int
	// Signature is the definition's head on one line: up to its body,
	// whitespace collapsed, at most maxSignature bytes.
	Signature string
}

// A Ref is an identifier a file uses: how many times, and how many of
// those are calls.
type Ref struct {
	Name  string
	Count int
	Calls int
}

// A File is what the map holds for one path.
type File struct {
	Path string
	// Lang is the language it was parsed as ("go", "python",
	// "javascript", "typescript", "tsx", "rust", "java", "c", "cpp" (a .h
	// header too), "csharp", "ruby", "php", "bash"), or "" for a file the
	// map lists by name only.
	Lang string
	// Note says why symbols are missing or partial (one of the Note
	// constants), or is "".
	Note    string
	Symbols []Symbol // in the order they appear
	Refs    []Ref    // sorted by name, keywords left out
}

// sym is a Symbol with what ranking and rendering need.
type sym struct {
	Symbol
	depth int // nesting depth: 0 at the top level
}

// defines yields the names s defines, for ranking: those in its Name (a Go
// spec may define several, "C, D"); an impl defines none. They are split
// when asked for, not kept: a symbol costs a slice less, and only Render
// asks.
func (s *sym) defines() iter.Seq[string] {
	if s.Name == "" || s.Kind == Impl {
		return func(func(string) bool) {}
	}
	return strings.SplitSeq(s.Name, ", ")
}

// file is one path's state. Its fields are replaced, never mutated, so a
// Files result may share them.
type file struct {
	path string
	lang *language
	// sum and size tell an Update with the same content, which changes
	// nothing.
	sum  uint64
	size int
	tree *ts.Tree // nil when not parsed, or dropped (keepTrees)
	used uint64   // when the tree was made, in Map.parses
	note string
	// src and chunks serve the next incremental parse, and are kept only
	// with the tree: src is the content of the last Update (our copy),
	// chunks the definitions by top-level node, which a reparse reuses
	// where the edit did not reach.
	src    []byte
	chunks []chunk
	syms   []sym // the definitions end to end
	refs   []Ref
}

// A Map is the repo map of a set of files. The zero value is not usable;
// call New. Its methods are safe for concurrent use.
type Map struct {
	mu      sync.Mutex
	files   map[string]*file
	focus   map[string]bool
	parsers []*ts.Parser // by index in languages, made when first needed
	parses  uint64       // parses so far
	trees   int          // files with a tree
	treed   []treed      // the files with a tree, oldest first (limitTrees)
	seed    maphash.Seed // for file.sum
}

// New returns an empty map.
func New() *Map {
	return &Map{files: make(map[string]*file), focus: make(map[string]bool), seed: maphash.MakeSeed()}
}

// Update sets the content of the file at path (slash-separated; the map
// reads only its extension and directory), parsing it again. When the map
// has the file's previous tree, only the changed region is reparsed: the
// edit is the span between the old and new content's common prefix and
// suffix. Update copies content; the caller may reuse it.
func (m *Map) Update(path string, content []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := m.files[path]
	sum := maphash.Bytes(m.seed, content)
	if old != nil && old.sum == sum && old.size == len(content) {
		return
	}
	f := &file{path: path, lang: languageFor(path), sum: sum, size: len(content), src: bytes.Clone(content)}
	f.note = classify(f.lang, f.src)
	if f.lang != nil && f.note == "" {
		m.parse(f, old)
	} else if old != nil {
		m.dropTree(old)
	}
	if f.tree == nil {
		f.src, f.chunks = nil, nil
	}
	m.files[path] = f
	m.limitTrees()
}

// dropTree frees f's tree, and what only an incremental parse needs.
func (m *Map) dropTree(f *file) {
	if f.tree != nil {
		f.tree.Close()
		f.tree = nil
		m.trees--
	}
	f.src, f.chunks = nil, nil
}

// limitTrees keeps the keepTrees newest trees: the files that hold one
// are queued in the order their trees were made, so the oldest is the
// first in the queue that still holds the tree it was queued with.
func (m *Map) limitTrees() {
	for m.trees > keepTrees && len(m.treed) > 0 {
		q := m.treed[0]
		m.treed[0] = treed{}
		m.treed = m.treed[1:]
		if q.f.tree != nil && q.f.used == q.used {
			m.dropTree(q.f)
		}
	}
	if len(m.treed) > 4*keepTrees {
		// Trees dropped otherwise (a file parsed again, removed) leave
		// their entries: the queue keeps only the live ones.
		live := m.treed[:0]
		for _, q := range m.treed {
			if q.f.tree != nil && q.f.used == q.used {
				live = append(live, q)
			}
		}
		clear(m.treed[len(live):])
		m.treed = live
	}
}

// treed is a file queued when its tree was made (Map.treed), and when.
type treed struct {
	f    *file
	used uint64
}

// classify is the note for content that is not parsed at all, or "".
func classify(l *language, src []byte) string {
	if bytes.IndexByte(src[:min(len(src), binarySniff)], 0) >= 0 {
		return NoteBinary
	}
	if l == nil {
		return ""
	}
	if len(src) > MaxParseBytes {
		return NoteTooLarge
	}
	if len(src) >= minifiedMin && len(src)/(bytes.Count(src, []byte{'\n'})+1) > minifiedLine {
		return NoteMinified
	}
	return ""
}

// parse parses f.src, reusing old's tree when it has one, and extracts
// f's symbols and references. It takes ownership of old's tree.
func (m *Map) parse(f *file, old *file) {
	p, err := m.parser(f.lang)
	if err != nil {
		if old != nil {
			m.dropTree(old)
		}
		f.note = NoteNoGrammar
		return
	}
	var prev *ts.Tree
	var edit ts.InputEdit
	var oldChunks []chunk
	if old != nil && old.tree != nil {
		prev, oldChunks = old.tree, old.chunks
		edit, _ = diffEdit(old.src, f.src)
		prev.Edit(&edit)
	}
	src := f.src
	tree := p.ParseWithOptions(func(i int, _ ts.Point) []byte {
		if i >= len(src) {
			return nil
		}
		return src[i:min(i+chunkSize, len(src))]
	}, prev, nil)
	var changed []ts.Range
	if prev != nil && tree != nil {
		changed = prev.ChangedRanges(tree)
	}
	if old != nil {
		m.dropTree(old)
	}
	if tree == nil {
		// Timed out. The parser would resume this parse next time, and
		// Reset does not make it forget a parse cut off while balancing
		// its tree (ts_parser_reset leaves canceled_balancing set in
		// v0.25.0): its next parse asserts and aborts the process. A
		// fresh parser is the safe way on.
		p.Close()
		m.parsers[slices.Index(languages, f.lang)] = nil
		f.note = NoteTimedOut
		return
	}
	m.parses++
	f.tree, f.used = tree, m.parses
	m.trees++
	m.treed = append(m.treed, treed{f, f.used})
	root := tree.RootNode()
	if root.HasError() {
		f.note = NoteSyntaxErrors
	}
	x := &extractor{l: f.lang, src: src, cur: root.Walk()}
	if prev != nil {
		f.chunks = x.reextract(root, oldChunks, edit, changed)
	} else {
		f.chunks = x.extract(root)
	}
	x.cur.Close()
	f.syms = flatten(f.chunks)
	f.refs = references(f.lang, src)
}

// parser is the map's parser for l. It fails only if the bindings cannot
// read the grammar (a build with mismatched versions).
func (m *Map) parser(l *language) (*ts.Parser, error) {
	i := slices.Index(languages, l)
	if m.parsers == nil {
		m.parsers = make([]*ts.Parser, len(languages))
	}
	if m.parsers[i] == nil {
		p := ts.NewParser()
		if err := p.SetLanguage(l.load().ts); err != nil {
			p.Close()
			return nil, err
		}
		// The deprecated timeout is the bindings' only leak-free way to
		// bound a parse: ParseOptions.ProgressCallback registers its
		// options with go-pointer and never releases them (v0.25.0).
		p.SetTimeoutMicros(parseTimeout) //lint:ignore SA1019 see above
		m.parsers[i] = p
	}
	return m.parsers[i], nil
}

// Remove drops the file at path.
func (m *Map) Remove(path string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f := m.files[path]; f != nil {
		m.dropTree(f)
		delete(m.files, path)
	}
}

// SetFocus names the files the user is working in; they are weighted up
// in the ranking. It replaces the previous set. A focus path the map does
// not hold counts once it is added.
func (m *Map) SetFocus(paths ...string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.focus = make(map[string]bool, len(paths))
	for _, p := range paths {
		m.focus[p] = true
	}
}

// Files returns what the map holds, sorted by path.
func (m *Map) Files() []File {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]File, 0, len(m.files))
	for _, f := range m.sorted() {
		ff := File{Path: f.path, Note: f.note, Refs: f.refs}
		if f.lang != nil {
			ff.Lang = f.lang.name
		}
		for _, s := range f.syms {
			ff.Symbols = append(ff.Symbols, s.Symbol)
		}
		out = append(out, ff)
	}
	return out
}

// sorted is the map's files by path.
func (m *Map) sorted() []*file {
	fs := make([]*file, 0, len(m.files))
	for _, f := range m.files {
		fs = append(fs, f)
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].path < fs[j].path })
	return fs
}

// Close frees the parsers and syntax trees, which live in C memory the
// garbage collector does not see. The map is empty afterwards and may be
// used again.
func (m *Map) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, f := range m.files {
		m.dropTree(f)
	}
	for _, p := range m.parsers {
		if p != nil {
			p.Close()
		}
	}
	m.files = make(map[string]*file)
	m.parsers = nil
}

// diffEdit describes the change from old to new as one edit: the span
// between their common prefix and common suffix, with both ends on rune
// boundaries. It reports false when they are equal.
func diffEdit(old, new []byte) (ts.InputEdit, bool) {
	p := commonPrefix(old, new)
	if p == len(old) && p == len(new) {
		return ts.InputEdit{}, false
	}
	for p > 0 && (p < len(old) && !utf8.RuneStart(old[p]) || p < len(new) && !utf8.RuneStart(new[p])) {
		p--
	}
	s := commonSuffix(old[p:], new[p:])
	for s > 0 && (!utf8.RuneStart(old[len(old)-s]) || !utf8.RuneStart(new[len(new)-s])) {
		s--
	}
	start := pointAt(old[:p])
	return ts.InputEdit{
		StartByte:      uint(p),
		OldEndByte:     uint(len(old) - s),
		NewEndByte:     uint(len(new) - s),
		StartPosition:  start,
		OldEndPosition: advance(start, old[p:len(old)-s]),
		NewEndPosition: advance(start, new[p:len(new)-s]),
	}, true
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	// Whole blocks first: bytes.Equal is vectorised.
	for i+256 <= n && bytes.Equal(a[i:i+256], b[i:i+256]) {
		i += 256
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix is the length of the longest common suffix of a and b.
func commonSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+256 <= n && bytes.Equal(a[len(a)-i-256:len(a)-i], b[len(b)-i-256:len(b)-i]) {
		i += 256
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// pointAt is the row and byte column at the end of text.
func pointAt(text []byte) ts.Point {
	return advance(ts.Point{}, text)
}

// advance moves p over text.
func advance(p ts.Point, text []byte) ts.Point {
	nl := bytes.Count(text, []byte{'\n'})
	if nl == 0 {
		return ts.Point{Row: p.Row, Column: p.Column + uint(len(text))}
	}
	return ts.Point{Row: p.Row + uint(nl), Column: uint(len(text) - 1 - bytes.LastIndexByte(text, '\n'))}
}

// clean makes s safe for a one-line map entry: valid UTF-8, no control
// characters.
func clean(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, isControl) < 0 {
		return s
	}
	s = strings.ToValidUTF8(s, "?")
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return '?'
		}
		return r
	}, s)
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }
