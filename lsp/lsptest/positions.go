package lsptest

import (
	"fmt"
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

// lineStarts are the byte offsets where lines begin; LSP ends a line at
// "\n", "\r\n" or "\r".
func lineStarts(text string) []int {
	starts := []int{0}
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineEnd is where the content of the line starting at start ends, before
// its line break.
func lineEnd(text string, start int) int {
	for i := start; i < len(text); i++ {
		if text[i] == '\n' || text[i] == '\r' {
			return i
		}
	}
	return len(text)
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
	starts := lineStarts(text)
	if p.Line < 0 || p.Line >= len(starts) || p.Character < 0 {
		return 0, fmt.Errorf("position %d:%d is outside a text of %d lines", p.Line, p.Character, len(starts))
	}
	i, end := starts[p.Line], lineEnd(text, starts[p.Line])
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

// PositionAt converts a byte offset of text (at a character boundary) to
// a position in enc.
func PositionAt(text string, offset int, enc string) Position {
	starts := lineStarts(text)
	line := 0
	for line+1 < len(starts) && starts[line+1] <= offset {
		line++
	}
	n := 0
	for i := starts[line]; i < offset; {
		r, size := utf8.DecodeRuneInString(text[i:])
		n += units(r, size, enc)
		i += size
	}
	return Position{Line: line, Character: n}
}

// RangeOf is the range of text[start:end] in enc.
func RangeOf(text string, start, end int, enc string) Range {
	return Range{Start: PositionAt(text, start, enc), End: PositionAt(text, end, enc)}
}
