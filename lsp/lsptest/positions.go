package lsptest

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The editor's own position arithmetic. It is written apart from the
// server's Mapper on purpose: a test that converted positions with the
// code under test would agree with any bug in it.

// Position is an LSP position: a line and a character offset in the
// negotiated encoding.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is an LSP range.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

func (r Range) String() string {
	return fmt.Sprintf("%d:%d-%d:%d", r.Start.Line, r.Start.Character, r.End.Line, r.End.Character)
}

// Position encodings.
const (
	UTF16 = "utf-16"
	UTF8  = "utf-8"
	UTF32 = "utf-32"
)

// lineSpan is one line of a text: text[start:end] is its content, and the
// next line starts at next (after its line break).
type lineSpan struct{ start, end, next int }

// lines are the lines of text as LSP counts them: a line ends at "\n",
// "\r\n" or a lone "\r", and a text has one more line than line breaks
// ("" has one line, "a\n" two). It is the harness's one line splitter.
func lines(text string) []lineSpan {
	var out []lineSpan
	start := 0
	for {
		i := strings.IndexAny(text[start:], "\r\n")
		if i < 0 {
			return append(out, lineSpan{start, len(text), len(text)})
		}
		end := start + i
		next := end + 1
		if text[end] == '\r' && next < len(text) && text[next] == '\n' {
			next++
		}
		out = append(out, lineSpan{start, end, next})
		start = next
	}
}

// lineAt is the number and the line of text that holds byte offset.
func lineAt(text string, offset int) (int, lineSpan) {
	ls := lines(text)
	n := 0
	for n+1 < len(ls) && ls[n+1].start <= offset {
		n++
	}
	return n, ls[n]
}

// units is how many code units r takes in enc.
func units(r rune, size int, enc string) int {
	switch enc {
	case UTF8:
		return size
	case UTF32:
		return 1
	}
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// Offset converts p to a byte offset of text. It is strict, as a careful
// editor is: a line past the end, a character past the end of its line,
// or one inside a character (half a surrogate pair, the middle of a UTF-8
// sequence) is an error.
func Offset(text string, p Position, enc string) (int, error) {
	ls := lines(text)
	if p.Line < 0 || p.Line >= len(ls) || p.Character < 0 {
		return 0, fmt.Errorf("position %d:%d is outside a text of %d lines", p.Line, p.Character, len(ls))
	}
	i, end := ls[p.Line].start, ls[p.Line].end
	for n := 0; n < p.Character; {
		if i >= end {
			return 0, fmt.Errorf("position %d:%d is past the end of its line (%d %s units)", p.Line, p.Character, n, enc)
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		n += units(r, size, enc)
		i += size
		if n > p.Character {
			return 0, fmt.Errorf("position %d:%d points inside the character %q (%s)", p.Line, p.Character, r, enc)
		}
	}
	return i, nil
}

// offsetLoose is Offset as eglot reads a position: a line past the end
// of the text is its end, a character past the end of its line the
// line's end.
func offsetLoose(text string, p Position, enc string) (int, error) {
	ls := lines(text)
	if p.Line < 0 || p.Character < 0 {
		return 0, fmt.Errorf("position %d:%d is negative", p.Line, p.Character)
	}
	if p.Line >= len(ls) {
		return len(text), nil
	}
	i, end := ls[p.Line].start, ls[p.Line].end
	for n := 0; n < p.Character && i < end; {
		r, size := utf8.DecodeRuneInString(text[i:])
		n += units(r, size, enc)
		i += size
	}
	return i, nil
}

// PositionAt converts a byte offset of text (at a character boundary) to
// a position in enc.
func PositionAt(text string, offset int, enc string) Position {
	num, l := lineAt(text, offset)
	n := 0
	for i := l.start; i < offset; {
		r, size := utf8.DecodeRuneInString(text[i:])
		n += units(r, size, enc)
		i += size
	}
	return Position{Line: num, Character: n}
}

// RangeOf is the range of text[start:end] in enc.
func RangeOf(text string, start, end int, enc string) Range {
	return Range{Start: PositionAt(text, start, enc), End: PositionAt(text, end, enc)}
}
