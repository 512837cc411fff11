package tools

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// arg is what is known of one shell word before bash expands it.
type arg struct {
	// text is the word's value when exact; otherwise the text every
	// expansion of it begins with ("" when nothing is known).
	text string
	// exact: the word stays one word, with the value text.
	exact bool
	// split: the word holds an unquoted expansion, so it may become
	// several words, any of which may begin with '-'.
	split bool
	// entry: the allowlist entry names this word; it is the user's
	// choice and not checked again.
	entry bool
}

// option reports whether the word is, or could expand to, an option:
// text that begins with '-'.
func (a arg) option() bool {
	if a.exact {
		return strings.HasPrefix(a.text, "-")
	}
	return a.split || a.text == "" || a.text[0] == '-'
}

// show quotes the word for a message.
func (a arg) show() string {
	if a.exact {
		return strconv.Quote(a.text)
	}
	return strconv.Quote(a.text + "…")
}

// wordArg works out what a word expands to, without expanding anything:
// quotes and backslashes are removed; an unquoted glob, brace or tilde, a
// parameter, command, arithmetic or process substitution ends what is
// known.
func wordArg(w *syntax.Word) arg {
	var b strings.Builder
	for _, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			if !unquoted(&b, x.Value) {
				return arg{text: b.String()}
			}
		case *syntax.SglQuoted:
			if x.Dollar {
				return arg{text: b.String()} // $'…' holds escapes
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			if x.Dollar {
				return arg{text: b.String()} // $"…" is translated
			}
			for _, q := range x.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return arg{text: b.String()}
				}
				doubleQuoted(&b, lit.Value)
			}
		case *syntax.ProcSubst:
			return arg{text: b.String() + "/dev/fd/"}
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp:
			return arg{text: b.String(), split: true}
		default: // extended globs, brace expansions
			return arg{text: b.String()}
		}
	}
	return arg{text: b.String(), exact: true}
}

// unquoted writes the value of unquoted literal text, and reports false
// at the first character that makes bash expand the word (a glob, a
// brace, a tilde): what precedes it is written.
func unquoted(b *strings.Builder, s string) bool {
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; ch {
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case '*', '?', '{', '~':
			return false
		case '[':
			if strings.IndexByte(s[i+1:], ']') >= 0 {
				return false
			}
			b.WriteByte(ch) // "[" alone, as in `[ -f x ]`, is not a glob
		default:
			b.WriteByte(ch)
		}
	}
	return true
}

// doubleQuoted writes the value of literal text between double quotes,
// where a backslash escapes only $ ` " \ and a newline.
func doubleQuoted(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				i++
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
}

func sortedKeys(m map[string]bool) []string {
	return slices.Sorted(maps.Keys(m))
}
