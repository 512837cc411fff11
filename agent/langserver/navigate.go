package langserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/reika-lsp/reika/agent/tools"
)

// maxLocations caps the locations of one answer.
const maxLocations = 200

var _ tools.Navigator = (*Servers)(nil)

// Definition finds where the symbol at q is defined
// (textDocument/definition); each location's snippet is the declaration
// that encloses it, from the file's documentSymbol.
func (s *Servers) Definition(ctx context.Context, q tools.NavQuery) (tools.NavAnswer, error) {
	return s.at(ctx, q, s.fallback().Definition, func(ctx context.Context, p *proc, pos protocol.TextDocumentPositionParams) (tools.NavAnswer, error) {
		var raw json.RawMessage
		if err := p.call(ctx, protocol.MethodTextDocumentDefinition, protocol.DefinitionParams{TextDocumentPositionParams: pos}, &raw); err != nil {
			return tools.NavAnswer{}, err
		}
		return tools.NavAnswer{Locations: s.declarations(ctx, p, decodeLocations(raw))}, nil
	})
}

// References finds where the symbol at q is used (textDocument/references,
// its declaration left out); each location's snippet is its line.
func (s *Servers) References(ctx context.Context, q tools.NavQuery) (tools.NavAnswer, error) {
	return s.at(ctx, q, s.fallback().References, func(ctx context.Context, p *proc, pos protocol.TextDocumentPositionParams) (tools.NavAnswer, error) {
		var locs []protocol.Location
		params := protocol.ReferenceParams{TextDocumentPositionParams: pos}
		if err := p.call(ctx, protocol.MethodTextDocumentReferences, params, &locs); err != nil {
			return tools.NavAnswer{}, err
		}
		return tools.NavAnswer{Locations: s.uses(ctx, p, locs)}, nil
	})
}

// Hover is the server's hover text at q: the symbol's signature and
// documentation.
func (s *Servers) Hover(ctx context.Context, q tools.NavQuery) (tools.NavAnswer, error) {
	return s.at(ctx, q, s.fallback().Hover, func(ctx context.Context, p *proc, pos protocol.TextDocumentPositionParams) (tools.NavAnswer, error) {
		var h struct {
			Contents json.RawMessage `json:"contents"`
		}
		if err := p.call(ctx, protocol.MethodTextDocumentHover, protocol.HoverParams{TextDocumentPositionParams: pos}, &h); err != nil {
			return tools.NavAnswer{}, err
		}
		return tools.NavAnswer{Text: hoverText(h.Contents)}, nil
	})
}

// at answers a question about the place q names: by its file and line,
// or, with neither, by the symbol's name (workspace/symbol first). Files
// no server serves go to the fallback.
func (s *Servers) at(ctx context.Context, q tools.NavQuery, fallback func(context.Context, tools.NavQuery) (tools.NavAnswer, error),
	fn func(context.Context, *proc, protocol.TextDocumentPositionParams) (tools.NavAnswer, error)) (tools.NavAnswer, error) {
	if q.Path == "" && q.Line == 0 && q.Symbol != "" {
		found, exact, err := s.workspaceSymbols(ctx, tools.NavQuery{Symbol: q.Symbol})
		if err != nil || found.Approximate || exact == 0 {
			return fallback(ctx, q)
		}
		l := found.Locations[0]
		q = tools.NavQuery{Path: l.Path, Line: l.Line, Column: l.Column, Symbol: q.Symbol}
	}
	abs, err := s.resolve(q.Path)
	if err != nil {
		return tools.NavAnswer{}, err
	}
	if !s.Serves(abs) {
		return fallback(ctx, q)
	}
	var ans tools.NavAnswer
	srv, err := s.with(ctx, abs, func(p *proc) error {
		text, u, err := s.give(ctx, p, abs)
		if err != nil {
			return err
		}
		var pos protocol.Position
		if q.Line > 0 {
			pos, err = position(text, q.Line, q.Column, lastPart(q.Symbol), p.enc)
		} else {
			pos, err = declaredIn(p.symbols(ctx, u), text, q.Symbol, p.enc)
		}
		if err != nil {
			return err
		}
		ans, err = fn(ctx, p, protocol.TextDocumentPositionParams{TextDocument: protocol.TextDocumentIdentifier{URI: u}, Position: pos})
		return err
	})
	ans.Source = srv.Name
	return ans, err
}

// declaredIn is the place (in enc) of symbol in a file with no line
// given: its declaration among decls (the file's documentSymbol), else
// its first occurrence in text.
func declaredIn(decls []decl, text, symbol string, enc encoding) (protocol.Position, error) {
	for _, d := range decls {
		if nameMatches(d.name, symbol) {
			return d.sel.Start, nil
		}
	}
	word := lastPart(symbol)
	for n, line := range strings.Split(text, "\n") {
		if col := wordIndex(line, word); col >= 0 {
			return protocol.Position{Line: uint32(n), Character: units(line, col, enc)}, nil
		}
	}
	return protocol.Position{}, fmt.Errorf("%q is not in this file: give the line where it is used", symbol)
}

// nameMatches reports whether a server's name of a symbol is symbol as
// the model wrote it: "Open", "Store.Open" for gopls's "(*Store).Open",
// a package-qualified "store.Open".
func nameMatches(name, symbol string) bool {
	name = strings.NewReplacer("(", "", ")", "", "*", "").Replace(name)
	return symbol != "" && (name == symbol || strings.HasSuffix(name, "."+symbol))
}

// lastPart is the name a symbol ends with: "Open" of "Store.Open".
func lastPart(symbol string) string {
	if i := strings.LastIndexByte(symbol, '.'); i >= 0 {
		return symbol[i+1:]
	}
	return symbol
}

// resolve returns the absolute path of the model's path, which must lie
// in a workspace folder.
func (s *Servers) resolve(path string) (string, error) {
	if path == "" {
		return "", errors.New("no file given: name the file, or the symbol alone")
	}
	abs := path
	if !filepath.IsAbs(abs) {
		if len(s.opts.Folders) == 0 {
			return "", fmt.Errorf("%s: no workspace folder to find it in", path)
		}
		abs = filepath.Join(s.opts.Folders[0], filepath.FromSlash(path))
	}
	abs = filepath.Clean(abs)
	for _, f := range s.opts.Folders {
		if inside(f, abs) {
			return abs, nil
		}
	}
	return "", fmt.Errorf("%s is outside the workspace", path)
}

// root is the folder answers' paths are relative to.
func (s *Servers) root() string {
	if len(s.opts.Folders) == 0 {
		return ""
	}
	return s.opts.Folders[0]
}

// text is the text of abs as the agent sees it, "" when unreadable or
// outside the workspace: a place a server points at there (the standard
// library, a dependency) is given without its lines, as the read tool
// would not show them either.
func (s *Servers) text(abs string) string {
	if _, err := s.resolve(abs); err != nil {
		return ""
	}
	t, err := s.opts.Text(abs)
	if err != nil {
		return ""
	}
	return t
}

// uses turns references into answers whose snippet is the use's line
// with its neighbours under the first line of the declaration it is
// written in (tools.NavUseSnippet), that from the file's documentSymbol.
func (s *Servers) uses(ctx context.Context, p *proc, locs []protocol.Location) []tools.NavLocation {
	sort.SliceStable(locs, func(i, j int) bool {
		if locs[i].URI != locs[j].URI {
			return locs[i].URI < locs[j].URI
		}
		return locs[i].Range.Start.Line < locs[j].Range.Start.Line
	})
	type file struct {
		text  string
		decls []decl
	}
	files := map[protocol.DocumentURI]file{}
	var out []tools.NavLocation
	for _, l := range locs[:min(len(locs), maxLocations)] {
		f, ok := files[l.URI]
		if !ok {
			f.text, f.decls = s.declsOf(ctx, p, l.URI)
			files[l.URI] = f
		}
		at := int(l.Range.Start.Line) + 1
		from, to := at, at
		if d, ok := enclosing(f.decls, l.Range.Start); ok {
			from, to = int(d.rng.Start.Line)+1, int(d.rng.End.Line)+1
		}
		out = append(out, s.location(p.enc, l, f.text, tools.NavUseSnippet(f.text, from, to, at)))
	}
	return out
}

// location converts l, a place in enc, with text the text of its file,
// and snippet.
func (s *Servers) location(enc encoding, l protocol.Location, text, snippet string) tools.NavLocation {
	start := lineOf(text, int(l.Range.Start.Line))
	return tools.NavLocation{
		Path:    relPath(s.root(), l.URI.Filename()),
		Line:    int(l.Range.Start.Line) + 1,
		Column:  byteCol(start, l.Range.Start.Character, enc) + 1,
		End:     int(l.Range.End.Line) + 1,
		Snippet: snippet,
	}
}

// declarations turns definition targets into answers whose snippet is
// the innermost declaration holding each (documentSymbol), else the
// target's own lines, as tools.NavSnippet writes them.
func (s *Servers) declarations(ctx context.Context, p *proc, locs []protocol.Location) []tools.NavLocation {
	var out []tools.NavLocation
	for _, l := range locs[:min(len(locs), maxLocations)] {
		text, decls := s.declsOf(ctx, p, l.URI)
		from, to := int(l.Range.Start.Line), int(l.Range.End.Line)
		if d, ok := enclosing(decls, l.Range.Start); ok {
			from, to = int(d.rng.Start.Line), int(d.rng.End.Line)
		}
		loc := s.location(p.enc, l, text, tools.NavSnippet(text, from+1, to+1, int(l.Range.Start.Line)+1))
		out = append(out, loc)
	}
	return out
}

// fallback is the Navigator for what no server answers.
func (s *Servers) fallback() tools.Navigator {
	if s.opts.Fallback != nil {
		return s.opts.Fallback
	}
	return noNavigator{}
}

// noNavigator answers nothing, saying why.
type noNavigator struct{}

var errNoNavigator = errors.New("no language server serves this file's language, and there is no repo map to ask")

func (noNavigator) Definition(context.Context, tools.NavQuery) (tools.NavAnswer, error) {
	return tools.NavAnswer{}, errNoNavigator
}
func (noNavigator) References(context.Context, tools.NavQuery) (tools.NavAnswer, error) {
	return tools.NavAnswer{}, errNoNavigator
}
func (noNavigator) Hover(context.Context, tools.NavQuery) (tools.NavAnswer, error) {
	return tools.NavAnswer{}, errNoNavigator
}
func (noNavigator) Symbols(context.Context, tools.NavQuery) (tools.NavAnswer, error) {
	return tools.NavAnswer{}, errNoNavigator
}
func (noNavigator) Diagnostics(context.Context, []string) (tools.NavAnswer, error) {
	return tools.NavAnswer{}, errNoNavigator
}

// decodeLocations reads a definition's result: a Location, Locations or
// LocationLinks.
func decodeLocations(raw json.RawMessage) []protocol.Location {
	type either struct {
		URI                  protocol.DocumentURI `json:"uri"`
		Range                protocol.Range       `json:"range"`
		TargetURI            protocol.DocumentURI `json:"targetUri"`
		TargetSelectionRange protocol.Range       `json:"targetSelectionRange"`
	}
	var many []either
	if err := json.Unmarshal(raw, &many); err != nil {
		var one either
		if json.Unmarshal(raw, &one) != nil {
			return nil
		}
		many = []either{one}
	}
	var out []protocol.Location
	for _, e := range many {
		switch {
		case e.TargetURI != "":
			out = append(out, protocol.Location{URI: e.TargetURI, Range: e.TargetSelectionRange})
		case e.URI != "":
			out = append(out, protocol.Location{URI: e.URI, Range: e.Range})
		}
	}
	return out
}

// hoverText reads hover's contents: MarkupContent, a MarkedString or a
// list of them.
func hoverText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	type marked struct {
		Value string `json:"value"`
	}
	var one marked
	if json.Unmarshal(raw, &one) == nil && one.Value != "" {
		return one.Value
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return ""
	}
	var parts []string
	for _, item := range list {
		if t := hoverText(item); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n\n")
}

// declsOf returns the text of the file at u and its declarations. A file
// of the server's folder and languages is given to it first: some
// servers (typescript-language-server) list the symbols of open
// documents only.
func (s *Servers) declsOf(ctx context.Context, p *proc, u protocol.DocumentURI) (string, []decl) {
	abs := u.Filename()
	if inside(p.folder, abs) && slices.Contains(p.srv.Languages, LanguageOf(abs)) {
		if text, _, err := s.give(ctx, p, abs); err == nil {
			return text, p.symbols(ctx, u)
		}
	}
	return s.text(abs), p.symbols(ctx, u)
}

// give hands the server the file abs as the agent sees it now, before a
// question about it, and returns that text and the file's URI.
func (s *Servers) give(ctx context.Context, p *proc, abs string) (string, protocol.DocumentURI, error) {
	text, err := s.opts.Text(abs)
	if err != nil {
		return "", "", err
	}
	u := uri.File(abs)
	_, _, err = p.sync(ctx, u, LanguageOf(abs), text)
	return text, u, err
}
