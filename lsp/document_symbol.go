package lsp

import (
	"context"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/repomap"
)

// documentSymbol answers textDocument/documentSymbol from the repo map's
// definitions of the document (eglot's imenu asks for it, and logged
// -32601 before): DocumentSymbol[] nested as the map nests them, or
// SymbolInformation[] for a client without hierarchical support. The
// map knows a definition's line, not its extent: each symbol's range is
// its first line. A document outside the workspace, or one the map has
// no grammar for, has no symbols.
func (s *Server) documentSymbol(_ context.Context, req jsonrpc2.Request, _ jsonrpc2.Replier) (any, error) {
	var p protocol.DocumentSymbolParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	uri := p.TextDocument.URI
	empty := []protocol.DocumentSymbol{}
	path, err := URIToPath(uri)
	if err != nil {
		return empty, nil
	}
	rel, inside := s.mapPath(path)
	if !inside {
		return empty, nil
	}
	// The map follows a changed document on its own worker: bring it up
	// to date first (unchanged text costs a hash).
	s.mapDocument(uri)
	var syms []repomap.Symbol
	for _, f := range s.repo.Files() {
		if f.Path == rel {
			syms = f.Symbols
			break
		}
	}
	text := s.current(path).Text
	lines := lineRanges(text, s.encoding())
	at := func(line int) protocol.Range {
		if line-1 < 0 || line-1 >= len(lines) {
			return protocol.Range{Start: protocol.Position{Line: uint32(max(line-1, 0))}, End: protocol.Position{Line: uint32(max(line-1, 0))}}
		}
		return lines[line-1]
	}
	if !s.caps().hierarchicalSymbols {
		out := make([]protocol.SymbolInformation, 0, len(syms))
		for _, sym := range syms {
			out = append(out, protocol.SymbolInformation{
				Name: symbolName(sym), Kind: symbolKind(sym.Kind), ContainerName: sym.Parent,
				Location: protocol.Location{URI: uri, Range: at(sym.Line)},
			})
		}
		return out, nil
	}
	// Children before their parents are placed: build bottom-up.
	nodes := make([]protocol.DocumentSymbol, len(syms))
	for i, sym := range syms {
		r := at(sym.Line)
		nodes[i] = protocol.DocumentSymbol{Name: symbolName(sym), Detail: sym.Signature, Kind: symbolKind(sym.Kind), Range: r, SelectionRange: r}
	}
	for i := len(syms) - 1; i >= 0; i-- {
		if c := syms[i].Container; c >= 0 && c < i {
			nodes[c].Children = append([]protocol.DocumentSymbol{nodes[i]}, nodes[c].Children...)
		}
	}
	out := empty
	for i, sym := range syms {
		if c := sym.Container; c < 0 || c >= i {
			out = append(out, nodes[i])
		}
	}
	return out, nil
}

// lineRanges are the ranges of the text's lines, their ends in the
// negotiated encoding.
func lineRanges(text string, enc Encoding) []protocol.Range {
	m := NewMapper(text, enc)
	var out []protocol.Range
	for start := 0; start <= len(text); {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += start
		}
		a, _ := m.Position(start)
		b, _ := m.Position(end)
		out = append(out, protocol.Range{Start: a, End: b})
		start = end + 1
	}
	return out
}

// symbolName is how a symbol reads in an outline: a Go method with its
// receiver, "(T).M".
func symbolName(s repomap.Symbol) string {
	if s.Kind == repomap.Method && s.Parent != "" && s.Container < 0 {
		return "(" + s.Parent + ")." + s.Name
	}
	if s.Name == "" {
		return string(s.Kind) + " " + s.Parent
	}
	return s.Name
}

// symbolKind is the LSP kind of a repo map kind.
func symbolKind(k repomap.Kind) protocol.SymbolKind {
	switch k {
	case repomap.Func:
		return protocol.SymbolKindFunction
	case repomap.Method:
		return protocol.SymbolKindMethod
	case repomap.Class, repomap.Impl:
		return protocol.SymbolKindClass
	case repomap.Interface, repomap.Trait:
		return protocol.SymbolKindInterface
	case repomap.Struct:
		return protocol.SymbolKindStruct
	case repomap.Enum:
		return protocol.SymbolKindEnum
	case repomap.Module:
		return protocol.SymbolKindModule
	case repomap.Const:
		return protocol.SymbolKindConstant
	case repomap.Var:
		return protocol.SymbolKindVariable
	case repomap.Macro:
		return protocol.SymbolKindFunction
	}
	return protocol.SymbolKindClass // a type
}
