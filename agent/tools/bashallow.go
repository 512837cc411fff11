package tools

import (
	"fmt"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// allowlist decides which bash commands run without asking the user.
//
// A command line runs without asking only when it parses as bash and every
// command in it — each side of a pipeline, `&&`, `||` and `;`, inside
// subshells, blocks, command substitutions `$(…)` and `…` and process
// substitutions — is a simple command that an entry names and whose
// arguments pass its program's rule (programs, in bashrules.go). An entry
// is a program and optionally leading arguments, matched word by word
// ("go test" covers `go test ./...`, not `go testfoo`); the longest entry
// that matches wins, and the words it names are the user's choice, not
// checked again. Anything else asks, with a reason:
//
//   - redirections that write (`>`, `>>`, `>|`, `&>`, `<>`, `>&file`),
//     unless to /dev/null, /dev/stdout or /dev/stderr; reading (`<`, here-documents, here-strings) is
//     fine;
//   - variable assignments, except a few harmless ones before a command
//     (safeAssign); functions, control flow (if, loops, case, `[[ ]]`,
//     arithmetic), declarations and background jobs;
//   - a program name that is not a plain word (`$X`, `f*`, `$(…)`);
//   - parameter expansions beyond `$NAME`, `${NAME}` and `${#NAME}` (they
//     can assign) and arithmetic expansions (array subscripts in them can
//     run commands);
//   - for programs whose rule inspects options, an argument whose value is
//     not known (a glob, `$VAR`, `$(…)`, `~`, braces) and that could be an
//     option — its text may begin with `-` or it may split into several
//     words.
//
// Reading is not confined: an allowed `cat /etc/passwd` or `grep -r x /`
// runs. The read, glob and grep tools keep to the workspace; for bash the
// allowlist guards against running programs and writing files, and the
// user who allows `cat` allows it to read what their account can read.
//
// An allowlist is immutable and safe for concurrent use.
type allowlist struct {
	entries [][]string
	// inside reports whether a path, relative to the first folder, is
	// in the workspace.
	inside func(path string) bool
}

// newAllowlist parses the entries; one that is not a plain command of
// plain words ("ls; rm", "$X") can never match and is dropped.
func newAllowlist(entries []string, inside func(string) bool) *allowlist {
	l := &allowlist{inside: inside}
	for _, e := range entries {
		if words, ok := entryWords(e); ok {
			l.entries = append(l.entries, words)
		}
	}
	return l
}

// with returns a copy of l with one more entry.
func (l *allowlist) with(entry string) *allowlist {
	n := &allowlist{inside: l.inside, entries: append([][]string(nil), l.entries...)}
	if words, ok := entryWords(entry); ok {
		n.entries = append(n.entries, words)
	}
	return n
}

func entryWords(e string) ([]string, bool) {
	f, err := parseBash(e)
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(call.Args) == 0 || len(st.Redirs) > 0 || st.Background || st.Negated {
		return nil, false
	}
	words := make([]string, len(call.Args))
	for i, w := range call.Args {
		a := wordArg(w)
		if !a.exact {
			return nil, false
		}
		words[i] = a.text
	}
	return words, true
}

func parseBash(s string) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), "")
}

// check returns "" when command runs without asking, or why it asks.
func (l *allowlist) check(command string) (why string) {
	defer func() {
		// The parser is a library: a panic in it asks rather than
		// failing the tool call.
		if r := recover(); r != nil {
			why = fmt.Sprintf("the command could not be checked (%v)", r)
		}
	}()
	if strings.IndexByte(command, 0) >= 0 {
		// The parser skips NUL bytes as bash does in a script; they
		// cannot be in a command line at all.
		return "the command holds a NUL byte"
	}
	if strings.IndexByte(command, '\r') >= 0 {
		// The parser reads a backslash before "\r\n" as a line continuation; bash reads
		// an escaped carriage return and then a new command.
		return "the command holds a carriage return"
	}
	f, err := parseBash(command)
	if err != nil {
		return fmt.Sprintf("the command does not parse as bash (%v)", err)
	}
	if len(f.Stmts) == 0 {
		return "the command has no command in it"
	}
	c := &checker{l: l}
	// A cd anywhere makes relative paths unknown, before it or after:
	// the checks that keep a path in the workspace then ask.
	syntax.Walk(f, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok && len(call.Args) > 0 {
			switch wordArg(call.Args[0]).text {
			case "cd", "pushd", "popd":
				c.moved = true
			}
		}
		return true
	})
	return c.stmts(f.Stmts)
}

// checker walks one command line and stops at the first reason to ask.
type checker struct {
	l     *allowlist
	moved bool // the command line changes directory
}

func (c *checker) stmts(list []*syntax.Stmt) string {
	for _, s := range list {
		if why := c.stmt(s); why != "" {
			return why
		}
	}
	return ""
}

func (c *checker) stmt(s *syntax.Stmt) string {
	if s.Background || s.Coprocess || s.Disown {
		return "it starts a command in the background"
	}
	for _, r := range s.Redirs {
		if why := c.redirect(r); why != "" {
			return why
		}
	}
	switch x := s.Cmd.(type) {
	case nil:
		return ""
	case *syntax.CallExpr:
		return c.call(x)
	case *syntax.BinaryCmd:
		if why := c.stmt(x.X); why != "" {
			return why
		}
		return c.stmt(x.Y)
	case *syntax.Subshell:
		return c.stmts(x.Stmts)
	case *syntax.Block:
		return c.stmts(x.Stmts)
	case *syntax.TimeClause:
		if x.Stmt == nil {
			return ""
		}
		return c.stmt(x.Stmt)
	case *syntax.FuncDecl:
		return "it defines a shell function"
	case *syntax.DeclClause:
		return fmt.Sprintf("%s sets shell variables", x.Variant.Value)
	default:
		return "it uses shell control flow (if, loops, case, [[ ]], arithmetic); only plain commands run without asking"
	}
}

func (c *checker) redirect(r *syntax.Redirect) string {
	if r.N != nil && strings.HasPrefix(r.N.Value, "{") {
		return "its redirection {var}> sets a shell variable"
	}
	target, why := c.word(r.Word)
	if why != "" {
		return why
	}
	if r.Hdoc != nil {
		if why := c.substitutions(r.Hdoc); why != "" {
			return why
		}
	}
	switch r.Op {
	case syntax.RdrIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return ""
	case syntax.DplIn, syntax.DplOut:
		if target.exact && (target.text == "-" || isDigits(target.text)) {
			return "" // 2>&1, >&2, 3<&-
		}
	}
	if target.exact && (target.text == "/dev/null" || target.text == "/dev/stdout" || target.text == "/dev/stderr") {
		return ""
	}
	return fmt.Sprintf("its redirection %s %s writes to a file", r.Op, target.show())
}

// safeAssign names the variables that may be set before a command, to a
// plain value: they change language, time zone, colour or Go's runtime,
// never which program runs or what it loads.
var safeAssign = map[string]bool{
	"LC_ALL": true, "LANG": true, "LANGUAGE": true, "TZ": true, "NO_COLOR": true,
	"CGO_ENABLED": true, "GOMAXPROCS": true, "GOTRACEBACK": true,
}

func (c *checker) call(x *syntax.CallExpr) string {
	if len(x.Args) == 0 {
		if len(x.Assigns) > 0 {
			return "it sets shell variables"
		}
		return ""
	}
	for _, as := range x.Assigns {
		if as.Name == nil || !safeAssign[as.Name.Value] || as.Append || as.Index != nil || as.Array != nil {
			name := "a variable"
			if as.Name != nil {
				name = as.Name.Value
			}
			return fmt.Sprintf("it sets %s for the command (only %s may be set)", name, strings.Join(sortedKeys(safeAssign), ", "))
		}
		if as.Value != nil {
			v, why := c.word(as.Value)
			if why != "" {
				return why
			}
			if !v.exact {
				return fmt.Sprintf("it sets %s to a value that is not a plain word", as.Name.Value)
			}
		}
	}
	args := make([]arg, len(x.Args))
	for i, w := range x.Args {
		a, why := c.word(w)
		if why != "" {
			return why
		}
		args[i] = a
	}
	return c.command(args)
}

// command checks one simple command: its program, the entry that names
// it and the program's rule.
func (c *checker) command(args []arg) string {
	prog := args[0]
	if !prog.exact {
		return fmt.Sprintf("the program name %s is not a plain word", prog.show())
	}
	p := programs[filepath.Base(prog.text)]
	if p.never != "" {
		return prog.text + " " + p.never
	}
	if p.wrap != nil {
		inner, why := p.wrap(args[1:])
		if why != "" {
			return prog.text + " " + why
		}
		return c.command(inner)
	}
	n := c.l.match(args)
	if n == 0 {
		return c.unlisted(args)
	}
	for i := range n {
		args[i].entry = true
	}
	if p.check == nil {
		return ""
	}
	return p.check(c, args[1:])
}

// match returns how many words of args the longest matching entry names,
// or 0.
func (l *allowlist) match(args []arg) int {
	best := 0
	for _, e := range l.entries {
		if len(e) > len(args) || len(e) <= best {
			continue
		}
		ok := true
		for i, w := range e {
			if !args[i].exact || args[i].text != w {
				ok = false
				break
			}
		}
		if ok {
			best = len(e)
		}
	}
	return best
}

func (c *checker) unlisted(args []arg) string {
	var named []string
	for _, e := range c.l.entries {
		if e[0] == args[0].text {
			named = append(named, strings.Join(e, " "))
		}
	}
	if len(named) == 0 {
		return fmt.Sprintf("%s is not on the %s list", args[0].text, AllowSetting)
	}
	return fmt.Sprintf("no %s entry covers this %s command (the list has %s)", AllowSetting, args[0].text, strings.Join(named, ", "))
}

// inside reports whether a path argument stays in the workspace; it is
// false for a path that is not a plain word, and for any relative path
// once the command line changes directory.
func (c *checker) inside(a arg) bool {
	if !a.exact || a.text == "" {
		return false
	}
	if a.text == "/dev/null" {
		return true
	}
	if c.moved && !filepath.IsAbs(a.text) {
		return false
	}
	return c.l.inside != nil && c.l.inside(a.text)
}

// word returns a word's argument after checking the commands it
// substitutes.
func (c *checker) word(w *syntax.Word) (arg, string) {
	if w == nil {
		return arg{exact: true}, ""
	}
	if why := c.substitutions(w); why != "" {
		return arg{}, why
	}
	return wordArg(w), ""
}

// substitutions checks the commands a word runs when it expands, and
// refuses expansions that can assign or evaluate.
func (c *checker) substitutions(w *syntax.Word) string {
	var why string
	syntax.Walk(w, func(n syntax.Node) bool {
		if why != "" {
			return false
		}
		switch x := n.(type) {
		case *syntax.CmdSubst:
			why = c.stmts(x.Stmts)
			return false
		case *syntax.ProcSubst:
			why = c.stmts(x.Stmts)
			return false
		case *syntax.ParamExp:
			if !plainParam(x) {
				why = "it uses a parameter expansion beyond $NAME (it can assign or run commands)"
			}
			return false
		case *syntax.ArithmExp:
			why = "it uses arithmetic expansion (array subscripts in it can run commands)"
			return false
		}
		return true
	})
	return why
}

func plainParam(p *syntax.ParamExp) bool {
	return p.Param != nil && p.Flags == nil && !p.Excl && !p.Width && !p.IsSet &&
		p.Split == syntax.OptUnset && p.GlobSubst == syntax.OptUnset && p.RcExpand == syntax.OptUnset &&
		p.NestedParam == nil && p.Index == nil && len(p.Modifiers) == 0 && p.Slice == nil &&
		p.Repl == nil && p.Names == 0 && p.Exp == nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
