package langserver

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"sort"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent/tools"
)

// decl is one declaration of a file's documentSymbol, flattened: its
// name, its whole range and its name's.
type decl struct {
	name     string
	rng, sel protocol.Range
}

// symbols returns the declarations of the document at u, nested ones
// after their parent, nil when the server gives none.
func (p *proc) symbols(ctx context.Context, u protocol.DocumentURI) []decl {
	var raw []json.RawMessage
	if p.call(ctx, protocol.MethodTextDocumentDocumentSymbol, protocol.DocumentSymbolParams{TextDocument: protocol.TextDocumentIdentifier{URI: u}}, &raw) != nil {
		return nil
	}
	type node struct {
		Name           string          `json:"name"`
		Range          *protocol.Range `json:"range"`
		SelectionRange protocol.Range  `json:"selectionRange"`
		Location       *struct {
			Range protocol.Range `json:"range"`
		} `json:"location"`
		Children []json.RawMessage `json:"children"`
	}
	var out []decl
	var walk func(raws []json.RawMessage, prefix string)
	walk = func(raws []json.RawMessage, prefix string) {
		for _, r := range raws {
			var n node
			if json.Unmarshal(r, &n) != nil {
				continue
			}
			switch {
			case n.Range != nil:
				out = append(out, decl{name: prefix + n.Name, rng: *n.Range, sel: n.SelectionRange})
				walk(n.Children, prefix+n.Name+".")
			case n.Location != nil:
				out = append(out, decl{name: n.Name, rng: n.Location.Range, sel: n.Location.Range})
			}
		}
	}
	walk(raw, "")
	return out
}

// enclosing returns the innermost of decls whose range holds pos.
func enclosing(decls []decl, pos protocol.Position) (decl, bool) {
	var best decl
	found := false
	for _, d := range decls {
		if contains(d.rng, pos) && (!found || contains(best.rng, d.rng.Start) && contains(best.rng, d.rng.End)) {
			best, found = d, true
		}
	}
	return best, found
}

func contains(r protocol.Range, p protocol.Position) bool {
	after := p.Line > r.Start.Line || p.Line == r.Start.Line && p.Character >= r.Start.Character
	before := p.Line < r.End.Line || p.Line == r.End.Line && p.Character <= r.End.Character
	return after && before
}

// Symbols lists the declarations of q.Path (textDocument/documentSymbol),
// each with its first line as its Message, as the repo map gives a
// signature; with no path, the workspace's
// symbols matching q.Symbol (workspace/symbol), exact names first.
func (s *Servers) Symbols(ctx context.Context, q tools.NavQuery) (tools.NavAnswer, error) {
	if q.Path == "" {
		ans, _, err := s.workspaceSymbols(ctx, q)
		return ans, err
	}
	abs, err := s.resolve(q.Path)
	if err != nil {
		return tools.NavAnswer{}, err
	}
	if !s.Serves(abs) {
		return s.fallback().Symbols(ctx, q)
	}
	var ans tools.NavAnswer
	srv, err := s.with(ctx, abs, func(p *proc) error {
		text, u, err := s.give(ctx, p, abs)
		if err != nil {
			return err
		}
		for _, d := range p.symbols(ctx, u) {
			if q.Symbol != "" && !strings.Contains(strings.ToLower(d.name), strings.ToLower(q.Symbol)) {
				continue
			}
			l := s.location(p.enc, protocol.Location{URI: u, Range: d.sel}, text, "")
			l.End = int(d.rng.End.Line) + 1
			l.Message = strings.TrimSpace(lineOf(text, int(d.rng.Start.Line)))
			ans.Locations = append(ans.Locations, l)
		}
		return nil
	})
	ans.Source = srv.Name
	return ans, err
}

// workspaceSymbols asks the servers of the workspace's languages for the
// symbols matching q.Symbol; exact names come first, and exact says how
// many. With no server for them, the fallback answers.
func (s *Servers) workspaceSymbols(ctx context.Context, q tools.NavQuery) (ans tools.NavAnswer, exact int, err error) {
	if q.Symbol == "" {
		return tools.NavAnswer{}, 0, errors.New("name a file, or the symbol to look for")
	}
	type info struct {
		Name     string            `json:"name"`
		Location protocol.Location `json:"location"`
	}
	var names []string
	var firstErr error
	for _, srv := range s.workspaceServers() {
		var found []info
		var enc encoding
		_, err := s.withServer(ctx, srv, s.root(), func(p *proc) error {
			enc = p.enc
			return p.call(ctx, protocol.MethodWorkspaceSymbol, protocol.WorkspaceSymbolParams{Query: lastPart(q.Symbol)}, &found)
		})
		if err != nil {
			firstErr = cmpErr(firstErr, err)
			continue
		}
		sort.SliceStable(found, func(i, j int) bool {
			return nameMatches(found[i].Name, q.Symbol) && !nameMatches(found[j].Name, q.Symbol)
		})
		for _, f := range found[:min(len(found), maxLocations)] {
			if nameMatches(f.Name, q.Symbol) && len(names) == 0 {
				exact++
			}
			text := s.text(f.Location.URI.Filename())
			l := s.location(enc, f.Location, text, "")
			l.Message = strings.TrimSpace(lineOf(text, int(f.Location.Range.Start.Line)))
			ans.Locations = append(ans.Locations, l)
		}
		names = append(names, srv.Name)
	}
	if len(names) == 0 {
		if firstErr != nil && s.opts.Fallback == nil {
			return tools.NavAnswer{}, 0, firstErr
		}
		ans, err := s.fallback().Symbols(ctx, q)
		return ans, 0, err
	}
	ans.Source = strings.Join(names, ", ")
	return ans, exact, nil
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// markers name a language by a file at the workspace's top.
var markers = map[string]string{
	"go.mod": "go", "go.work": "go", "Cargo.toml": "rust", "pyproject.toml": "python", "setup.py": "python",
	"requirements.txt": "python", "package.json": "typescript", "tsconfig.json": "typescript",
	"compile_commands.json": "c", "CMakeLists.txt": "c",
}

// workspaceServers are the configured servers of the languages at the
// workspace root: its marker files, and its files' extensions for the
// languages that need no project.
func (s *Servers) workspaceServers() []Server {
	entries, _ := os.ReadDir(s.root())
	langs := map[string]bool{}
	for _, e := range entries {
		if l, ok := markers[e.Name()]; ok {
			langs[l] = true
		}
		if l := LanguageOf(e.Name()); l != "" && len(projects[l]) == 0 {
			langs[l] = true
		}
	}
	if langs["typescript"] {
		langs["javascript"] = true
	}
	if langs["c"] {
		langs["cpp"] = true
	}
	var out []Server
	seen := map[string]bool{}
	for _, srv := range s.opts.Servers {
		for _, l := range srv.Languages {
			if langs[l] && !seen[srv.Name] {
				seen[srv.Name] = true
				out = append(out, srv)
			}
		}
	}
	return out
}
