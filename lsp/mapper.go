package lsp

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"go.lsp.dev/protocol"
)

// Encoding is the unit in which a position's Character counts: the
// position encoding the client and server agreed on at initialize (LSP
// 3.17 PositionEncodingKind). UTF-16 is the default every client supports.
type Encoding int

const (
	// UTF16 counts UTF-16 code units: a rune outside the Basic
	// Multilingual Plane (😀, 𝔸) counts 2, any other rune 1.
	UTF16 Encoding = iota
	// UTF8 counts bytes.
	UTF8
	// UTF32 counts runes.
	UTF32
)

// String returns the PositionEncodingKind value of e: "utf-16", "utf-8" or
// "utf-32".
func (e Encoding) String() string {
	switch e {
	case UTF16:
		return "utf-16"
	case UTF8:
		return "utf-8"
	case UTF32:
		return "utf-32"
	}
	return fmt.Sprintf("Encoding(%d)", int(e))
}

// Mapper converts between LSP positions and byte offsets in one text. It
// is the only place in Reika that does: everything past the lsp package
// works in byte offsets.
//
// The rules, from the LSP specification:
//
//   - A line ends at "\n", "\r\n" or a lone "\r"; a text has one more line
//     than it has line breaks ("" has one line, "a\n" has two).
//   - Character counts code units of the Mapper's Encoding from the start
//     of the line. A byte that is not valid UTF-8 counts as one unit in
//     every encoding, as if it were U+FFFD (the way Go decodes it).
//   - A Character past the end of its line clamps to the end of the line,
//     before its line break.
//   - A Character that falls inside a rune (between the two halves of a
//     surrogate pair in UTF-16, inside a multi-byte sequence in UTF-8)
//     snaps back to the start of that rune.
//   - Line == the number of lines with Character 0 is the end of the text
//     (clients send it for "the end of the document"); any other line past
//     the last is an error.
//
// Position is strict the other way: an offset inside a rune or between
// the "\r" and "\n" of a CRLF names no position and is an error, since an
// offset computed by Reika should never land there.
//
// A Mapper is built once per text and is safe for concurrent use; its
// line index is computed on first use, in one pass over the text.
type Mapper struct {
	text string
	enc  Encoding

	once   sync.Once
	starts []int // byte offset at which each line starts; starts[0] == 0
	ascii  bool  // no byte ≥ 0x80: a Character is a byte count in every encoding
}

// NewMapper returns a Mapper for text, counting characters in enc. An
// Encoding other than UTF8 and UTF32 counts as UTF16.
func NewMapper(text string, enc Encoding) *Mapper {
	if enc != UTF8 && enc != UTF32 {
		enc = UTF16
	}
	return &Mapper{text: text, enc: enc}
}

// newIndexedMapper is NewMapper for a text whose line starts (lineStarts)
// are known. ascii may be false for an ASCII text, which only takes the
// slower path.
func newIndexedMapper(text string, enc Encoding, starts []int, ascii bool) *Mapper {
	m := NewMapper(text, enc)
	m.once.Do(func() { m.starts, m.ascii = starts, ascii })
	return m
}

// index computes the line starts, once.
func (m *Mapper) index() {
	m.once.Do(func() {
		m.starts, m.ascii = lineStarts(m.text), isASCII(m.text)
	})
}

// lineStarts returns the offsets at which the lines of t start.
func lineStarts(t string) []int {
	starts := make([]int, 1, 1+len(t)/32)
	if strings.IndexByte(t, '\r') < 0 {
		// The common case, LF only: IndexByte is much faster than a loop.
		for i := 0; ; {
			j := strings.IndexByte(t[i:], '\n')
			if j < 0 {
				return starts
			}
			i += j + 1
			starts = append(starts, i)
		}
	}
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(t) && t[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		}
	}
	return starts
}

// spliceStarts updates starts, the line starts of a text, to those of
// text, which is that text with the bytes [start, end) replaced by n bytes
// at start. It reuses the array of starts and reads only around the
// change: a line break is decided by its byte and the one after, so the
// starts before start stay, those after end move by the change in length,
// and those in between are read from text.
func spliceStarts(starts []int, text string, start, end, n int) []int {
	lo, _ := slices.BinarySearch(starts, start)
	lo = max(lo, 1) // the first line starts at 0 whatever the change
	hi, _ := slices.BinarySearch(starts, end+1)
	var mid []int
	for i := max(start-1, 0); i < start+n; i++ {
		if c := text[i]; c == '\n' || c == '\r' && (i+1 == len(text) || text[i+1] != '\n') {
			mid = append(mid, i+1)
		}
	}
	starts = slices.Replace(starts, lo, hi, mid...)
	if delta := n - (end - start); delta != 0 {
		for i := lo + len(mid); i < len(starts); i++ {
			starts[i] += delta
		}
	}
	return starts
}

// isASCII reports whether s has no byte ≥ 0x80, eight bytes at a time.
func isASCII(s string) bool {
	const high = 0x8080808080808080
	for ; len(s) >= 8; s = s[8:] {
		if binary.LittleEndian.Uint64([]byte(s[:8]))&high != 0 {
			return false
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// line returns the byte offsets of the start of line i and of its end,
// before its line break.
func (m *Mapper) line(i int) (start, end int) {
	start = m.starts[i]
	if i+1 == len(m.starts) {
		return start, len(m.text)
	}
	end = m.starts[i+1] - 1 // the '\n' or lone '\r'
	if end > start && m.text[end] == '\n' && m.text[end-1] == '\r' {
		end--
	}
	return start, end
}

// Offset returns the byte offset of p, with the clamping and snapping the
// Mapper's doc describes.
func (m *Mapper) Offset(p protocol.Position) (int, error) {
	m.index()
	n := uint64(len(m.starts))
	if line := uint64(p.Line); line >= n {
		if line == n && p.Character == 0 {
			return len(m.text), nil
		}
		return 0, fmt.Errorf("position %d:%d is past the end of the document (%d lines)", p.Line, p.Character, n)
	}
	start, end := m.line(int(p.Line))
	char := uint64(p.Character)
	if m.ascii || m.enc == UTF8 {
		if char >= uint64(end-start) {
			return end, nil
		}
		o := start + int(char)
		if m.ascii {
			return o, nil
		}
		return m.runeStart(start, end, o), nil
	}
	units := uint64(0)
	for i := start; i < end; {
		w, size := uint64(1), 1
		if c := m.text[i]; c >= utf8.RuneSelf {
			var r rune
			r, size = utf8.DecodeRuneInString(m.text[i:end])
			if m.enc == UTF16 && r >= 0x10000 {
				w = 2
			}
		}
		if units+w > char {
			return i, nil // char is here, or inside this rune: snap to its start
		}
		units += w
		i += size
	}
	return end, nil
}

// runeStart returns the start of the rune that contains byte o of the line
// [start, end), decoding as Go does: a valid sequence is one rune, every
// byte of an invalid one is a rune of its own.
func (m *Mapper) runeStart(start, end, o int) int {
	if o >= end || utf8.RuneStart(m.text[o]) {
		return o // a byte that does not continue a sequence starts a rune
	}
	// A continuation byte: look back for the byte that began its sequence.
	// That byte is a rune start (nothing valid continues through it); if
	// its rune covers o, o is inside it.
	for q := o - 1; q >= start && q > o-utf8.UTFMax; q-- {
		if utf8.RuneStart(m.text[q]) {
			if _, size := utf8.DecodeRuneInString(m.text[q:end]); q+size > o {
				return q
			}
			return o
		}
	}
	return o
}

// OffsetRange returns the byte offsets of r's start and end. An end before
// the start is an error.
func (m *Mapper) OffsetRange(r protocol.Range) (start, end int, err error) {
	if start, err = m.Offset(r.Start); err != nil {
		return 0, 0, err
	}
	if end, err = m.Offset(r.End); err != nil {
		return 0, 0, err
	}
	if end < start {
		return 0, 0, fmt.Errorf("range %d:%d-%d:%d ends before it starts", r.Start.Line, r.Start.Character, r.End.Line, r.End.Character)
	}
	return start, end, nil
}

// Position returns the position of the byte offset o. An offset outside
// [0, len(text)], inside a rune, or between the "\r" and "\n" of a CRLF is
// an error.
func (m *Mapper) Position(o int) (protocol.Position, error) {
	if o < 0 || o > len(m.text) {
		return protocol.Position{}, fmt.Errorf("offset %d is outside the document (%d bytes)", o, len(m.text))
	}
	m.index()
	line := sort.Search(len(m.starts), func(i int) bool { return m.starts[i] > o }) - 1
	start, end := m.line(line)
	if o > end {
		return protocol.Position{}, fmt.Errorf("offset %d is inside a line break", o)
	}
	var units int
	switch {
	case m.ascii:
		units = o - start
	case m.enc == UTF8:
		if m.runeStart(start, end, o) != o {
			return protocol.Position{}, fmt.Errorf("offset %d is inside a character", o)
		}
		units = o - start
	default:
		i := start
		for i < o {
			units++
			if m.text[i] < utf8.RuneSelf {
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(m.text[i:end])
			if m.enc == UTF16 && r >= 0x10000 {
				units++
			}
			i += size
		}
		if i != o {
			return protocol.Position{}, fmt.Errorf("offset %d is inside a character", o)
		}
	}
	return protocol.Position{Line: uint32(line), Character: uint32(units)}, nil
}
