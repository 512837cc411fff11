package repomap

import (
	"bytes"
	"slices"
	"strings"
)

// A lexStyle says how to skip a language's comments and string literals
// when collecting the identifiers a file uses.
type lexStyle int

const (
	lexGo     lexStyle = iota // // and /* */; "…", '…' and `raw`
	lexPython                 // #; '…', "…", triple quotes, string prefixes
	lexJS                     // // and /* */; '…', "…" and `templates`; $ in names
	lexRust                   // // and nested /* */; "…", r#"…"#, 'c' but not 'lifetimes
	// C, C++, Java, C#: // and /* */; "…", '…', Java's and C#'s """blocks""",
	// C#'s @"verbatim", C++'s R"d(raw)d" (and the L, u, U, u8 prefixes).
	lexC
	lexRuby  // # and =begin/=end; '…' and "…" over lines; names may end in ? or !
	lexShell // # and '…' at a word's start, '…' over lines; "…" and `…` are read: they expand $(calls)
	lexPHP   // //, /* */ and # (not #[attributes]); '…' and "…" over lines; $ in names
)

// references returns the identifiers src uses, with counts, sorted by
// name, keywords left out. It reads the text, not the tree: a scan of the
// bytes that skips comments and string literals costs a fraction of a
// walk over every node through cgo, and ranking needs only the names. A
// tokenizer this small errs only towards noise (a word in a template's
// ${…}, a regular expression's letters), which ranking tolerates: a name
// counts only where another file defines it.
//
// A use is also counted as a call when the name is followed by "(" (or,
// in Rust, by "!"), or in JavaScript and TypeScript follows "<" as a JSX
// element does: a function or method is ranked by its calls, since a
// variable or field often shares its name. Ruby calls a method without
// parentheses as often as with them, and a shell calls a function as a
// command: there every use but of a variable ($x, @x, ${x}) is a call.
func references(l *language, src []byte) []Ref {
	counts := make(map[string]*Ref)
	scan(l.lex, src, func(at, end int) {
		id := src[at:end]
		r := counts[string(id)]
		if r == nil {
			if l.keyword[string(id)] {
				return
			}
			r = &Ref{Name: string(id)}
			counts[r.Name] = r
		}
		r.Count++
		if isCall(l.lex, src, at, end) {
			r.Calls++
		}
	})
	refs := make([]Ref, 0, len(counts))
	for _, r := range counts {
		refs = append(refs, *r)
	}
	slices.SortFunc(refs, func(a, b Ref) int { return strings.Compare(a.Name, b.Name) })
	return refs
}

// isCall reports whether the identifier at src[at:end] is called (or
// written as a JSX element or a Rust macro).
func isCall(style lexStyle, src []byte, at, end int) bool {
	switch style {
	case lexRuby:
		return at == 0 || src[at-1] != '@' && src[at-1] != '$'
	case lexShell:
		return at == 0 || src[at-1] != '$' && src[at-1] != '{' && src[at-1] != '#' // $x, ${x}, ${#x}
	}
	for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
		end++
	}
	if end < len(src) && (src[end] == '(' || style == lexRust && src[end] == '!') {
		return true
	}
	return style == lexJS && at > 0 && src[at-1] == '<'
}

func isIdentStart(c byte, style lexStyle) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80 || c == '$' && (style == lexJS || style == lexPHP)
}

func isIdentPart(c byte, style lexStyle) bool {
	return isIdentStart(c, style) || c >= '0' && c <= '9'
}

// A token is what nextToken found.
type token int

const (
	tokOther token = iota // punctuation, space, anything else: one byte
	tokIdent
	tokNumber
	tokComment
	tokString
)

// nextToken reads the token starting at src[i] and returns its kind and
// end.
func nextToken(style lexStyle, src []byte, i int) (token, int) {
	n := len(src)
	c := src[i]
	switch {
	case isIdentStart(c, style):
		j := i + 1
		for j < n && isIdentPart(src[j], style) {
			j++
		}
		if j < n && isStringPrefix(style, src[i:j], src[j:]) {
			return tokString, skipString(style, src, j, src[i:j])
		}
		if style == lexRuby && j < n && (src[j] == '?' || src[j] == '!') && (j+1 == n || src[j+1] != '=') {
			j++ // valid?, save!
		}
		return tokIdent, j
	case c >= '0' && c <= '9':
		j := i
		for j < n && (isIdentPart(src[j], style) || src[j] == '.') {
			j++
		}
		return tokNumber, j
	case c == '#' && isHashComment(style, src, i):
		return tokComment, skipLine(src, i)
	case c == '=' && style == lexRuby && (i == 0 || src[i-1] == '\n') && bytes.HasPrefix(src[i:], []byte("=begin")):
		return tokComment, skipRubyBlock(src, i)
	case c == '/' && slashComments(style) && i+1 < n && src[i+1] == '/':
		return tokComment, skipLine(src, i)
	case c == '/' && slashComments(style) && i+1 < n && src[i+1] == '*':
		return tokComment, skipBlock(src, i, style == lexRust)
	case c == '@' && style == lexC && i+1 < n && src[i+1] == '"':
		return tokString, skipVerbatim(src, i+1)
	case c == '"' && style == lexShell, c == '`' && style == lexShell:
		return tokOther, i + 1 // read on: "$(f)" calls f
	case c == '"' || c == '`' && (style == lexGo || style == lexJS || style == lexRuby):
		return tokString, skipString(style, src, i, nil)
	case c == '\'' && style == lexRust:
		return tokString, skipRustQuote(src, i)
	case c == '\'' && style == lexShell && i > 0 && strings.IndexByte(" \t\n=(;|&\"$", src[i-1]) < 0:
		return tokOther, i + 1 // an apostrophe in a word: "don't"
	case c == '\'':
		return tokString, skipString(style, src, i, nil)
	}
	return tokOther, i + 1
}

// isHashComment reports whether the '#' at src[i] starts a comment: in
// Python and Ruby always, in PHP unless it opens an attribute (#[), in a
// shell script only at a word's start ($# and ${#a} are not comments).
func isHashComment(style lexStyle, src []byte, i int) bool {
	switch style {
	case lexPython, lexRuby:
		return true
	case lexPHP:
		return i+1 >= len(src) || src[i+1] != '['
	case lexShell:
		return i == 0 || strings.IndexByte(" \t\n;|&()", src[i-1]) >= 0
	}
	return false
}

// slashComments reports whether the style's comments are // and /* */.
func slashComments(style lexStyle) bool {
	return style != lexPython && style != lexRuby && style != lexShell
}

// scan calls ident with the bounds of each identifier in src outside
// comments and string literals.
func scan(style lexStyle, src []byte, ident func(at, end int)) {
	for i := 0; i < len(src); {
		t, j := nextToken(style, src, i)
		if t == tokIdent {
			ident(i, j)
		}
		i = j
	}
}

// stripComments is src with each comment replaced by a space.
func stripComments(style lexStyle, src []byte) []byte {
	out := make([]byte, 0, len(src))
	for i := 0; i < len(src); {
		t, j := nextToken(style, src, i)
		if t == tokComment {
			out = append(out, ' ')
		} else {
			out = append(out, src[i:j]...)
		}
		i = j
	}
	return out
}

// isStringPrefix reports whether word, followed by rest, begins a string
// literal: Python's r"…", b'…', f"…" (and pairs), Rust's b"…", r"…", r#"…"#,
// br#"…"#.
func isStringPrefix(style lexStyle, word, rest []byte) bool {
	q := rest[0]
	switch style {
	case lexPython:
		if (q != '"' && q != '\'') || len(word) > 2 {
			return false
		}
		for _, c := range word {
			if !strings.ContainsRune("rRbBfFuUtT", rune(c)) {
				return false
			}
		}
		return true
	case lexRust:
		w := string(word)
		return q == '"' && (w == "b" || w == "r" || w == "br" || w == "c" || w == "cr") ||
			q == '#' && (w == "r" || w == "br" || w == "cr")
	case lexC:
		switch string(word) {
		case "L", "u", "U", "u8", "R", "LR", "uR", "UR", "u8R":
			return q == '"'
		}
	}
	return false
}

func skipLine(src []byte, i int) int {
	for i < len(src) && src[i] != '\n' {
		i++
	}
	return i
}

// skipBlock skips a /* */ comment starting at i; nested ones in Rust.
func skipBlock(src []byte, i int, nested bool) int {
	depth := 0
	for i < len(src) {
		switch {
		case src[i] == '/' && i+1 < len(src) && src[i+1] == '*':
			if depth == 0 || nested {
				depth++
			}
			i += 2
		case src[i] == '*' && i+1 < len(src) && src[i+1] == '/':
			depth--
			i += 2
			if depth == 0 {
				return i
			}
		default:
			i++
		}
	}
	return i
}

// skipString skips a string literal whose opening quote (or, for a Rust
// raw string, first '#') is at i; prefix is the string prefix before it.
func skipString(style lexStyle, src []byte, i int, prefix []byte) int {
	n := len(src)
	q := src[i]
	if style == lexRust && strings.ContainsRune(string(prefix), 'r') {
		hashes := 0
		for i < n && src[i] == '#' {
			hashes++
			i++
		}
		if i >= n || src[i] != '"' {
			return i
		}
		i++
		for i < n {
			if src[i] == '"' && allHashes(src[i+1:min(n, i+1+hashes)], hashes) {
				return i + 1 + hashes
			}
			i++
		}
		return n
	}
	if style == lexC && strings.HasSuffix(string(prefix), "R") {
		return skipCppRaw(src, i)
	}
	triple := (style == lexPython || style == lexC && q == '"') && i+2 < n && src[i+1] == q && src[i+2] == q
	if triple {
		i += 3
		for i+2 < n {
			if src[i] == '\\' {
				i += 2
				continue
			}
			if src[i] == q && src[i+1] == q && src[i+2] == q {
				return i + 3
			}
			i++
		}
		return n
	}
	// Rust, Ruby, shell and PHP strings, Go raw strings and JavaScript
	// templates may span lines; the others end at the line's end if not
	// before. A shell's '…' has no escapes.
	multiline := style == lexRust || style == lexRuby || style == lexShell || style == lexPHP || q == '`'
	i++
	for i < n {
		switch c := src[i]; {
		case c == '\\' && !(style == lexGo && q == '`') && !(style == lexShell && q == '\''):
			i += 2
			continue
		case c == q:
			return i + 1
		case c == '\n' && !multiline:
			return i
		}
		i++
	}
	return n
}

func allHashes(b []byte, n int) bool {
	if len(b) != n {
		return false
	}
	for _, c := range b {
		if c != '#' {
			return false
		}
	}
	return true
}

// skipVerbatim skips C#'s @"…" from its quote at i: it spans lines, and
// "" is a quote inside it.
func skipVerbatim(src []byte, i int) int {
	for i++; i < len(src); i++ {
		if src[i] == '"' {
			if i+1 < len(src) && src[i+1] == '"' {
				i++
				continue
			}
			return i + 1
		}
	}
	return len(src)
}

// skipCppRaw skips C++'s R"d(…)d" from its quote at i; without a '(' on
// the line it is an ordinary string.
func skipCppRaw(src []byte, i int) int {
	open := bytes.IndexByte(src[i:min(len(src), i+18)], '(')
	if open < 0 {
		return skipString(lexC, src, i, nil)
	}
	end := ")" + string(src[i+1:i+open]) + "\""
	if k := bytes.Index(src[i+open:], []byte(end)); k >= 0 {
		return i + open + k + len(end)
	}
	return len(src)
}

// skipRubyBlock skips a =begin … =end comment starting at i.
func skipRubyBlock(src []byte, i int) int {
	if k := bytes.Index(src[i:], []byte("\n=end")); k >= 0 {
		return skipLine(src, i+k+1)
	}
	return len(src)
}

// skipRustQuote skips a char literal ('a', '\n', '\u{1F600}') or just the
// quote of a lifetime ('a), whose name then reads as an identifier.
func skipRustQuote(src []byte, i int) int {
	n := len(src)
	if i+1 < n && src[i+1] == '\\' {
		j := i + 2
		for j < n && src[j] != '\'' && src[j] != '\n' {
			j++
		}
		return min(j+1, n)
	}
	// One character, possibly several bytes, then a quote.
	j := i + 1
	if j < n && src[j] >= 0x80 {
		j++
		for j < n && src[j]&0xC0 == 0x80 {
			j++
		}
	} else {
		j++
	}
	if j < n && src[j] == '\'' {
		return j + 1
	}
	return i + 1
}
