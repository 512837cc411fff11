package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/reika-lsp/reika/contextwin"
)

// The navigation tools ask the session's Navigator and write its answer
// small: a location is a line "path:line:col" with its snippet indented
// below it, at most navLocations of them, the whole within navBytes; the
// locations past what fits are listed without their snippets while they
// fit, and a last line counts the rest. An approximate answer says so in
// its first line, so that the model checks it before relying on it.

// Limits of a navigation answer.
const (
	navLocations = 20      // locations listed
	navBytes     = 6 << 10 // the whole answer, about 1,500 tokens
	navHoverLen  = 2 << 10 // hover's text
	navPaths     = 20      // files diagnostics takes at once
)

// NavApproximate is the first line of an approximate answer.
const NavApproximate = "approximate: found by name in the repo map, not by a language server"

// navArgs are the navigation tools' arguments; each takes its own.
type navArgs struct {
	Path   string     `json:"path"`
	Line   flexInt    `json:"line"`
	Column flexInt    `json:"column"`
	Symbol string     `json:"symbol"`
	Query  string     `json:"query"`
	Paths  flexString `json:"paths"`
}

// flexString is a list of strings that also accepts one string, as
// models write a single path.
type flexString []string

func (f *flexString) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*f = flexString{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("%s is neither a path nor a list of paths", string(b))
	}
	*f = many
	return nil
}

// navAt runs definition, references or hover: a symbol, or a place.
func (s *Set) navAt(ctx context.Context, tool string, raw json.RawMessage) Result {
	var a navArgs
	if r := decode(tool, raw, &a); r != nil {
		return *r
	}
	q := NavQuery{Line: a.Line.n, Column: a.Column.n, Symbol: strings.TrimSpace(a.Symbol)}
	if q.Line < 0 || q.Column < 0 {
		return failf("%s: line and column are 1-based; give positive numbers, or symbol alone", tool)
	}
	if strings.TrimSpace(a.Path) == "" && q.Symbol == "" {
		return failf("%s needs \"symbol\" (a name, or Type.method), or \"path\" and \"line\" of a use; for example %s", tool, exampleArgs[tool])
	}
	if strings.TrimSpace(a.Path) != "" {
		t, err := s.resolve(a.Path, false)
		if err != nil {
			return failf("%s: %v", tool, err)
		}
		q.Path = t.rel
		if q.Line == 0 && q.Symbol == "" {
			return failf("%s needs \"line\" with \"path\" (or \"symbol\"): the place of the name to look up", tool)
		}
	}
	subject := navSubject(q)
	p := contextwin.Payload{Kind: contextwin.Search, Path: subject}
	var ans NavAnswer
	var err error
	switch tool {
	case DefinitionTool:
		ans, err = s.nav.Definition(ctx, q)
	case ReferencesTool:
		ans, err = s.nav.References(ctx, q)
	default:
		ans, err = s.nav.Hover(ctx, q)
	}
	if err != nil {
		return Result{Error: true, Payload: p, Content: fmt.Sprintf("%s of %s failed: %v; look with grep and read instead", tool, subject, err)}
	}
	return Result{Content: writeNav(tool, subject, ans), Payload: p}
}

// navSubject names what was asked: the symbol, and the place when given
// ("Open at store.go:6", "Open in store.go", "store.go:6:6").
func navSubject(q NavQuery) string {
	place := q.Path
	if q.Path != "" && q.Line > 0 {
		place += ":" + strconv.Itoa(q.Line)
		if q.Column > 0 {
			place += ":" + strconv.Itoa(q.Column)
		}
	}
	switch {
	case q.Symbol != "" && q.Path != "" && q.Line > 0:
		return q.Symbol + " at " + place
	case q.Symbol != "" && q.Path != "":
		return q.Symbol + " in " + place
	case q.Symbol != "":
		return q.Symbol
	}
	return place
}

// symbols lists a file's declarations, or the workspace's by name.
func (s *Set) symbols(ctx context.Context, raw json.RawMessage) Result {
	var a navArgs
	if r := decode(SymbolsTool, raw, &a); r != nil {
		return *r
	}
	q := NavQuery{Symbol: strings.TrimSpace(a.Query)}
	if q.Symbol == "" {
		q.Symbol = strings.TrimSpace(a.Symbol)
	}
	if strings.TrimSpace(a.Path) != "" {
		t, err := s.resolve(a.Path, false)
		if err != nil {
			return failf(SymbolsTool+": %v", err)
		}
		q.Path = t.rel
	} else if q.Symbol == "" {
		return failf(SymbolsTool+" needs \"path\" (a file whose declarations to list) or \"query\" (part of a name); for example %s", exampleArgs[SymbolsTool])
	}
	subject := q.Path
	if subject == "" {
		subject = strconv.Quote(q.Symbol)
	}
	p := contextwin.Payload{Kind: contextwin.Search, Path: subject}
	ans, err := s.nav.Symbols(ctx, q)
	if err != nil {
		return Result{Error: true, Payload: p, Content: fmt.Sprintf("symbols of %s failed: %v; look with grep and read instead", subject, err)}
	}
	return Result{Content: writeNav(SymbolsTool, subject, ans), Payload: p}
}

// diagnostics reports the errors and warnings of the files named.
func (s *Set) diagnostics(ctx context.Context, raw json.RawMessage) Result {
	var a navArgs
	if r := decode(DiagnosticsTool, raw, &a); r != nil {
		return *r
	}
	if len(a.Paths) == 0 && strings.TrimSpace(a.Path) != "" {
		a.Paths = flexString{a.Path}
	}
	if len(a.Paths) == 0 {
		return failf(DiagnosticsTool+" needs \"paths\": the files to check; for example %s", exampleArgs[DiagnosticsTool])
	}
	if len(a.Paths) > navPaths {
		return failf("%s takes at most %d files at once, not %d; ask for the ones you changed", DiagnosticsTool, navPaths, len(a.Paths))
	}
	paths := make([]string, 0, len(a.Paths))
	for _, path := range a.Paths {
		t, err := s.resolve(path, false)
		if err != nil {
			return failf(DiagnosticsTool+": %v", err)
		}
		paths = append(paths, t.rel)
	}
	subject := strings.Join(paths, " ")
	p := contextwin.Payload{Kind: contextwin.Search, Path: subject}
	ans, err := s.nav.Diagnostics(ctx, paths)
	if err != nil {
		return Result{Error: true, Payload: p, Content: fmt.Sprintf("diagnostics of %s failed: %v; build or vet the code with bash instead", subject, err)}
	}
	return Result{Content: writeNav(DiagnosticsTool, subject, ans), Payload: p}
}

// navSymbols is how many declarations symbols lists: one line each, so
// more than the other tools' locations fit.
const navSymbols = 100

// navMoreReserve is the room kept for the line that counts the rest.
const navMoreReserve = 100

// writeNav writes an answer as the model reads it: the approximate line
// when it is one, a head naming the question and what answered, the text
// (hover's), then the locations within the answer's limits.
func writeNav(tool, subject string, ans NavAnswer) string {
	var b strings.Builder
	if ans.Approximate {
		b.WriteString(NavApproximate + "\n")
	}
	head := tool + " of " + subject
	if ans.Source != "" && !ans.Approximate {
		head += " (" + ans.Source + ")"
	}
	text := strings.TrimSpace(ans.Text)
	if text != "" {
		b.WriteString(head + ":\n" + validUTF8(clipWithCount(text, navHoverLen)) + "\n")
	}
	switch {
	case len(ans.Locations) > 0:
		fmt.Fprintf(&b, "%s: %s\n", head, plural(len(ans.Locations), "location"))
	case text == "":
		b.WriteString(head + ": " + navNone(tool, ans.Approximate) + "\n")
	}
	limit := navLocations
	if tool == SymbolsTool {
		limit = navSymbols
	}
	shown, bare := 0, false
locations:
	for _, l := range ans.Locations[:min(len(ans.Locations), limit)] {
		loc := navPlace(l)
		room := navBytes - navMoreReserve - b.Len()
		snip := capSnippet(l.Snippet)
		switch {
		case !bare && snip != "" && len(loc)+len(snip)+2 <= room:
			b.WriteString(loc + "\n" + snip + "\n")
		case len(loc)+1 <= room:
			// Past the room for snippets the locations go on alone, so
			// that the model keeps every place it asked for.
			bare = bare || snip != ""
			b.WriteString(loc + "\n")
		default:
			break locations
		}
		shown++
	}
	if shown < len(ans.Locations) {
		fmt.Fprintf(&b, "… and %s not shown; narrow the question (a path, Type.method)\n", plural(len(ans.Locations)-shown, "more location"))
	}
	if bare {
		b.WriteString("(some locations are listed without their lines, for room: read them)\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// navPlace is a location's line: path:line:col, then a diagnostic's
// severity and the message (a diagnostic's, or a symbol's signature).
func navPlace(l NavLocation) string {
	s := l.Path + ":" + strconv.Itoa(max(l.Line, 1)) + ":" + strconv.Itoa(max(l.Column, 1))
	if l.Severity != "" {
		s += ": " + l.Severity
	}
	if m := strings.Join(strings.Fields(l.Message), " "); m != "" {
		s += ": " + validUTF8(clipWithCount(m, 300))
	}
	return s
}

// capSnippet holds a snippet to NavSnippetLines lines (and their gap
// marks), whatever wrote it, each line indented.
func capSnippet(snip string) string {
	snip = strings.TrimRight(snip, "\n")
	if snip == "" {
		return ""
	}
	lines := strings.Split(snip, "\n")
	if len(lines) > NavSnippetLines+2 {
		lines = append(lines[:NavSnippetLines], "     …")
	}
	for i, l := range lines {
		l = validUTF8(clipWithCount(l, navLineLen+10))
		if !strings.HasPrefix(l, " ") {
			l = "  " + l
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

// navNone is what an answer with nothing says, with what to do next.
func navNone(tool string, approximate bool) string {
	what := map[string]string{
		DefinitionTool:  "no definition found",
		ReferencesTool:  "no references found",
		SymbolsTool:     "no declarations found",
		HoverTool:       "nothing to show",
		DiagnosticsTool: "no errors or warnings",
	}[tool]
	if approximate {
		what += " (the repo map holds the files open in the editor and those read so far: grep for the name)"
	}
	return what
}
