package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/repomap"
)

// MapIndex is a RepoMap whose index the navigation tools may ask: the
// repomap.Map behind it, which the front end keeps up to date. A
// session whose RepoMap is one (MapFiles, the language server's) offers
// definition, references, symbols, hover and diagnostics, answered from
// it (mapNavigator) until a language server answers them.
type MapIndex interface {
	RepoMap
	// Index is the map itself, up to date, asked once per question; the
	// navigator only reads it, and adds a file it is asked about through
	// Learn, as a read would.
	Index() *repomap.Map
}

// Index is m: the navigation tools ask it.
func (f mapFiles) Index() *repomap.Map { return f.m }

var _ MapIndex = mapFiles{}

// mapSource names the repo map as what answered.
const mapSource = "repo map"

// noServer is what hover and diagnostics say where no language server
// runs: the map finds declarations by name, and knows no types.
const noServer = "no language server runs in this session, so there is "

// mapNavigator answers the navigation tools from the repo map's index:
// a definition is a declaration of the name, a reference the name
// written in a file the map holds, so every answer is approximate. It
// reads the files it shows, as the read tool does: the editor's open
// document, else the disk.
type mapNavigator struct {
	idx     MapIndex
	folders []string
	buffers tools.Buffers
	// editor holds the diagnostics the editor sent with an ask, nil
	// when the front end sends none.
	editor *tools.EditorDiagnostics
}

// newMapNavigator is the navigator over idx's map, reading files below
// folders (the first is the root relative paths are taken against).
func newMapNavigator(idx MapIndex, folders []string, buffers tools.Buffers, editor *tools.EditorDiagnostics) *mapNavigator {
	return &mapNavigator{idx: idx, folders: folders, buffers: buffers, editor: editor}
}

// text is the file at path (relative to a workspace folder, or absolute),
// as the editor has it or else on the disk; false when it cannot be read
// or is larger than the map takes.
func (n *mapNavigator) text(path string) (tools.FileText, bool) {
	var candidates []string
	switch {
	case filepath.IsAbs(path):
		candidates = []string{filepath.Clean(path)}
	case filepath.IsLocal(filepath.FromSlash(path)):
		for _, dir := range n.folders {
			candidates = append(candidates, filepath.Join(dir, filepath.FromSlash(path)))
		}
	}
	for _, abs := range candidates {
		if n.buffers != nil {
			if text, _, ok := n.buffers.Open(abs); ok {
				return tools.FileText{Path: path, Abs: abs, Text: text}, true
			}
		}
		if st, err := os.Stat(abs); err != nil || !st.Mode().IsRegular() || st.Size() > MapFileMax {
			continue
		}
		if b, err := os.ReadFile(abs); err == nil {
			return tools.FileText{Path: path, Abs: abs, Text: string(b)}, true
		}
	}
	return tools.FileText{}, false
}

// name is the identifier a question asks about: its symbol, else the
// name written at its place.
func (n *mapNavigator) name(q tools.NavQuery) (string, error) {
	if q.Symbol != "" && (q.Path == "" || q.Column == 0) {
		return q.Symbol, nil
	}
	f, ok := n.text(q.Path)
	if !ok {
		return "", fmt.Errorf("cannot read %s", q.Path)
	}
	if name := repomap.IdentAt(q.Path, []byte(f.Text), q.Line, q.Column); name != "" {
		return name, nil
	}
	return "", fmt.Errorf("there is no name at %s:%d:%d outside comments and strings (give symbol, or the column of the name)", q.Path, q.Line, q.Column)
}

// answer is an approximate answer of the repo map.
func answer(locs []tools.NavLocation) tools.NavAnswer {
	return tools.NavAnswer{Locations: locs, Approximate: true, Source: mapSource}
}

// Definition lists the declarations of the name, those in the asking
// file first, then those in its directory, then the rest by path.
func (n *mapNavigator) Definition(_ context.Context, q tools.NavQuery) (tools.NavAnswer, error) {
	name, err := n.name(q)
	if err != nil {
		return tools.NavAnswer{}, err
	}
	defs := n.idx.Index().Definitions(name)
	near := func(d repomap.Definition) int {
		switch {
		case d.Path == q.Path:
			return 0
		case q.Path != "" && filepath.Dir(d.Path) == filepath.Dir(q.Path):
			return 1
		}
		return 2
	}
	var locs []tools.NavLocation
	for rank := 0; rank <= 2; rank++ {
		for _, d := range defs {
			if near(d) == rank {
				locs = append(locs, n.declaration(d, name))
			}
		}
	}
	return answer(locs), nil
}

// declaration is the location of d: where its name is written on its
// line, with its lines.
func (n *mapNavigator) declaration(d repomap.Definition, name string) tools.NavLocation {
	loc := tools.NavLocation{Path: d.Path, Line: d.Line, Column: 1, End: d.End}
	f, ok := n.text(d.Path)
	if !ok {
		return loc
	}
	_, base := splitName(name)
	for _, o := range repomap.Occurrences(d.Path, []byte(f.Text), base) {
		if o.Line >= d.Line {
			if o.Line <= d.End {
				loc.Line, loc.Column = o.Line, o.Column
			}
			break
		}
	}
	loc.Snippet = tools.NavSnippet(f.Text, d.Line, d.End, loc.Line)
	return loc
}

// splitName splits a qualified name as the map does: "Store.Close" is
// Close of Store.
func splitName(name string) (parent, base string) {
	for _, sep := range []string{"::", ".", "#"} {
		if i := strings.LastIndex(name, sep); i >= 0 {
			return name[:i], name[i+len(sep):]
		}
	}
	return "", name
}

// References lists where the name is written in the files the map holds
// that use it, each with the first line of the declaration it is written
// in and the lines around it.
func (n *mapNavigator) References(_ context.Context, q tools.NavQuery) (tools.NavAnswer, error) {
	name, err := n.name(q)
	if err != nil {
		return tools.NavAnswer{}, err
	}
	_, base := splitName(name)
	m := n.idx.Index()
	var locs []tools.NavLocation
	for _, path := range m.Users(base) {
		f, ok := n.text(path)
		if !ok {
			continue
		}
		file, _ := m.File(path)
		for _, o := range repomap.Occurrences(path, []byte(f.Text), base) {
			from, to := enclosing(file.Symbols, o.Line)
			locs = append(locs, tools.NavLocation{Path: path, Line: o.Line, Column: o.Column,
				Snippet: tools.NavUseSnippet(f.Text, from, to, o.Line)})
		}
	}
	return answer(locs), nil
}

// enclosing is the line range of the innermost declaration of syms that
// holds line, or line alone when none does.
func enclosing(syms []repomap.Symbol, line int) (from, to int) {
	from, to = line, line
	best := -1
	for i, s := range syms {
		if s.Line <= line && line <= s.End && (best < 0 || s.Line >= syms[best].Line) {
			best = i
		}
	}
	if best >= 0 {
		from, to = syms[best].Line, syms[best].End
	}
	return from, to
}

// Symbols lists a file's declarations (reading the file into the map
// when it does not hold it yet), or the map's whose names hold q.Symbol.
func (n *mapNavigator) Symbols(_ context.Context, q tools.NavQuery) (tools.NavAnswer, error) {
	m := n.idx.Index()
	if q.Path == "" {
		var locs []tools.NavLocation
		for _, d := range m.Match(q.Symbol) {
			locs = append(locs, symbolLocation(d.Path, d.Symbol))
		}
		return answer(locs), nil
	}
	file, ok := m.File(q.Path)
	if !ok {
		f, read := n.text(q.Path)
		if !read {
			return tools.NavAnswer{}, fmt.Errorf("cannot read %s", q.Path)
		}
		n.idx.Learn(f)
		file, _ = m.File(q.Path)
	}
	if file.Note != "" && len(file.Symbols) == 0 {
		return tools.NavAnswer{}, fmt.Errorf("the repo map has no declarations of %s (%s)", q.Path, file.Note)
	}
	var locs []tools.NavLocation
	for _, s := range file.Symbols {
		locs = append(locs, symbolLocation(q.Path, s))
	}
	return answer(locs), nil
}

// symbolLocation is a declaration listed by symbols: its place and its
// signature (with what it belongs to, when the signature does not say).
func symbolLocation(path string, s repomap.Symbol) tools.NavLocation {
	msg := s.Signature
	if msg == "" {
		msg = string(s.Kind) + " " + s.Name
	}
	if s.Parent != "" && !strings.Contains(msg, s.Parent) {
		msg += " (in " + s.Parent + ")"
	}
	return tools.NavLocation{Path: path, Line: s.Line, Column: 1, End: s.End, Message: msg}
}

// Hover has no answer without a language server: the map knows no types.
func (n *mapNavigator) Hover(context.Context, tools.NavQuery) (tools.NavAnswer, error) {
	return tools.NavAnswer{Source: mapSource,
		Text: noServer + "no hover: " + tools.DefinitionTool + " shows the declarations the repo map finds by name"}, nil
}

// Diagnostics are the editor's (tools.EditorDiagnostics) when an ask
// carried them: the map knows no errors.
func (n *mapNavigator) Diagnostics(_ context.Context, paths []string) (tools.NavAnswer, error) {
	if ans, ok := n.editor.EditorAnswer(paths); ok {
		for i, l := range ans.Locations {
			if f, ok := n.text(l.Path); ok {
				ans.Locations[i].Snippet = tools.NavSnippet(f.Text, l.Line, l.Line, l.Line)
			}
		}
		return ans, nil
	}
	return tools.NavAnswer{Source: mapSource,
		Text: noServer + "no diagnostics: check the files with the build, vet or type checker through bash (go vet ./pkg, tsc --noEmit, python -m py_compile file.py)"}, nil
}
