package lsp

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"unicode/utf16"

	"go.lsp.dev/protocol"
)

// The reference model: slow and obviously right. It splits the text into
// lines, then each line into runes as Go's range loop decodes them (an
// invalid byte is one rune, U+FFFD), and counts units rune by rune.

type refLine struct {
	start   int    // byte offset of the line in the text
	content string // without its line break
}

func refSplit(text string) []refLine {
	var lines []refLine
	start := 0
	for i := 0; i < len(text); {
		brk := 0
		switch {
		case strings.HasPrefix(text[i:], "\r\n"):
			brk = 2
		case text[i] == '\r' || text[i] == '\n':
			brk = 1
		default:
			i++
			continue
		}
		lines = append(lines, refLine{start, text[start:i]})
		i += brk
		start = i
	}
	return append(lines, refLine{start, text[start:]})
}

type refRune struct{ off, units int }

func refRunes(content string, enc Encoding) []refRune {
	var offs []int
	var runes []rune
	for off, r := range content {
		offs = append(offs, off)
		runes = append(runes, r)
	}
	out := make([]refRune, len(offs))
	for i, off := range offs {
		size := len(content) - off
		if i+1 < len(offs) {
			size = offs[i+1] - off
		}
		units := 1
		switch enc {
		case UTF8:
			units = size
		case UTF16:
			units = utf16.RuneLen(runes[i]) // 2 above U+FFFF; RuneError is 1
		}
		out[i] = refRune{off, units}
	}
	return out
}

// refOffset is the model of Mapper.Offset in a text of size bytes split
// into lines.
func refOffset(lines []refLine, size int, p protocol.Position, enc Encoding) (int, bool) {
	switch {
	case int64(p.Line) == int64(len(lines)) && p.Character == 0:
		return size, true
	case int64(p.Line) >= int64(len(lines)):
		return 0, false
	}
	l := lines[p.Line]
	units := int64(0)
	for _, r := range refRunes(l.content, enc) {
		if units == int64(p.Character) || units+int64(r.units) > int64(p.Character) {
			return l.start + r.off, true
		}
		units += int64(r.units)
	}
	return l.start + len(l.content), true
}

// refPositions maps every offset that has a position to it.
func refPositions(text string, enc Encoding) map[int]protocol.Position {
	pos := make(map[int]protocol.Position)
	for i, l := range refSplit(text) {
		units := 0
		for _, r := range refRunes(l.content, enc) {
			pos[l.start+r.off] = protocol.Position{Line: uint32(i), Character: uint32(units)}
			units += r.units
		}
		pos[l.start+len(l.content)] = protocol.Position{Line: uint32(i), Character: uint32(units)}
	}
	return pos
}

// alphabet is what fuzzed bytes become: astral characters, combining
// marks, every line break, and broken UTF-8 (whose pieces may join into
// valid runes, or not).
var alphabet = []string{
	"a", "Z", " ", "\t", "é", "ß", "中", "😀", "𝔸", "e\u0301", "\u0301", "\u200d",
	"\r\n", "\r", "\n", "\xff", "\xe2\x82", "\xed\xa0\x80", "\xf0\x9f", "\x80",
}

func tokens(data []byte) string {
	var b strings.Builder
	for _, c := range data {
		b.WriteString(alphabet[int(c)%len(alphabet)])
	}
	return b.String()
}

var encodings = []Encoding{UTF16, UTF8, UTF32}

func pos(line, char uint32) protocol.Position {
	return protocol.Position{Line: line, Character: char}
}

func fmtPos(p protocol.Position) string { return fmt.Sprintf("%d:%d", p.Line, p.Character) }

func TestEncoding(t *testing.T) {
	for _, tc := range []struct {
		enc  Encoding
		name string
	}{{UTF16, "utf-16"}, {UTF8, "utf-8"}, {UTF32, "utf-32"}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.enc.String(); got != tc.name {
				t.Errorf("String() = %q, want %q", got, tc.name)
			}
			if got, ok := ParseEncoding(tc.name); got != tc.enc || !ok {
				t.Errorf("ParseEncoding(%q) = %v, %v, want %v, true", tc.name, got, ok, tc.enc)
			}
		})
	}
	for _, s := range []string{"", "UTF-16", "utf16", "latin1"} {
		if got, ok := ParseEncoding(s); ok {
			t.Errorf("ParseEncoding(%q) = %v, true, want false", s, got)
		}
	}
	if got := Encoding(7).String(); got != "Encoding(7)" {
		t.Errorf("Encoding(7).String() = %q, want %q", got, "Encoding(7)")
	}
}

// mixed has a CRLF, a lone CR and an LF; astral runes (2 UTF-16 units, 4
// bytes) and a 2-byte rune. Byte offsets: a 0, 😀 1-4, b 5, CRLF 6-7,
// é 8-9, 𝔸 10-13, CR 14, x 15, LF 16, end 17-19; 20 bytes, 4 lines.
const mixed = "a😀b\r\né𝔸\rx\nend"

func TestMapperOffset(t *testing.T) {
	const bad = -1
	for _, tc := range []struct {
		name string
		text string
		enc  Encoding
		p    protocol.Position
		want int // bad: an error
	}{
		{"start", mixed, UTF16, pos(0, 0), 0},
		{"before astral", mixed, UTF16, pos(0, 1), 1},
		{"inside surrogate pair snaps to its start", mixed, UTF16, pos(0, 2), 1},
		{"after astral", mixed, UTF16, pos(0, 3), 5},
		{"line end is before CRLF", mixed, UTF16, pos(0, 4), 6},
		{"past line end clamps before CRLF", mixed, UTF16, pos(0, 99), 6},
		{"huge character clamps", mixed, UTF16, pos(0, math.MaxUint32), 6},
		{"line 1", mixed, UTF16, pos(1, 0), 8},
		{"after 2-byte rune", mixed, UTF16, pos(1, 1), 10},
		{"inside pair on line 1", mixed, UTF16, pos(1, 2), 10},
		{"line end before lone CR", mixed, UTF16, pos(1, 3), 14},
		{"past line end clamps before lone CR", mixed, UTF16, pos(1, 4), 14},
		{"line after lone CR", mixed, UTF16, pos(2, 0), 15},
		{"past line end clamps before LF", mixed, UTF16, pos(2, 5), 16},
		{"last line end", mixed, UTF16, pos(3, 3), 20},
		{"past last line end clamps", mixed, UTF16, pos(3, 9), 20},
		{"line count, char 0 is end of document", mixed, UTF16, pos(4, 0), 20},
		{"line count, char 1 is an error", mixed, UTF16, pos(4, 1), bad},
		{"past line count is an error", mixed, UTF16, pos(5, 0), bad},
		{"huge line is an error", mixed, UTF16, pos(math.MaxUint32, 0), bad},

		{"utf-8 byte", mixed, UTF8, pos(0, 1), 1},
		{"utf-8 inside 4-byte rune snaps", mixed, UTF8, pos(0, 3), 1},
		{"utf-8 after astral", mixed, UTF8, pos(0, 5), 5},
		{"utf-8 line end", mixed, UTF8, pos(0, 6), 6},
		{"utf-8 past line end clamps", mixed, UTF8, pos(0, 7), 6},
		{"utf-8 inside 2-byte rune snaps", mixed, UTF8, pos(1, 1), 8},
		{"utf-8 after 2-byte rune", mixed, UTF8, pos(1, 2), 10},
		{"utf-8 end of document", mixed, UTF8, pos(4, 0), 20},

		{"utf-32 astral is one unit", mixed, UTF32, pos(0, 2), 5},
		{"utf-32 line end", mixed, UTF32, pos(0, 3), 6},
		{"utf-32 line 1", mixed, UTF32, pos(1, 2), 14},

		{"empty text start", "", UTF16, pos(0, 0), 0},
		{"empty text clamps", "", UTF16, pos(0, 5), 0},
		{"empty text end of document", "", UTF16, pos(1, 0), 0},
		{"empty text line 2", "", UTF16, pos(2, 0), bad},
		{"trailing LF makes an empty last line", "a\n", UTF16, pos(1, 0), 2},
		{"trailing LF end of document", "a\n", UTF16, pos(2, 0), 2},
		{"combining mark counts alone", "e\u0301x", UTF16, pos(0, 2), 3},
		{"invalid bytes count one each (utf-16)", "\xff\xe2\x82z", UTF16, pos(0, 2), 2},
		{"invalid bytes count one each (utf-8)", "\xff\xe2\x82z", UTF8, pos(0, 3), 3},
		{"invalid bytes count one each (utf-32)", "\xff\xe2\x82z", UTF32, pos(0, 3), 3},
		{"encoded surrogate is three invalid bytes", "\xed\xa0\x80z", UTF16, pos(0, 3), 3},
		{"CR CR LF is two breaks", "\r\r\nx", UTF16, pos(2, 0), 3},
		{"LF CR is two breaks", "\n\rx", UTF16, pos(2, 0), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NewMapper(tc.text, tc.enc).Offset(tc.p)
			if tc.want == bad {
				if err == nil {
					t.Errorf("Offset(%s) in %q (%v) = %d, want an error", fmtPos(tc.p), tc.text, tc.enc, got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("Offset(%s) in %q (%v) = %d, %v, want %d", fmtPos(tc.p), tc.text, tc.enc, got, err, tc.want)
			}
		})
	}
}

func TestMapperPosition(t *testing.T) {
	for _, tc := range []struct {
		name    string
		text    string
		enc     Encoding
		offset  int
		want    protocol.Position
		wantErr bool
	}{
		{"start", mixed, UTF16, 0, pos(0, 0), false},
		{"before astral", mixed, UTF16, 1, pos(0, 1), false},
		{"inside astral", mixed, UTF16, 2, pos(0, 0), true},
		{"after astral", mixed, UTF16, 5, pos(0, 3), false},
		{"before CRLF", mixed, UTF16, 6, pos(0, 4), false},
		{"inside CRLF", mixed, UTF16, 7, pos(0, 0), true},
		{"after CRLF", mixed, UTF16, 8, pos(1, 0), false},
		{"inside 2-byte rune", mixed, UTF16, 9, pos(0, 0), true},
		{"before lone CR", mixed, UTF16, 14, pos(1, 3), false},
		{"after lone CR", mixed, UTF16, 15, pos(2, 0), false},
		{"end", mixed, UTF16, 20, pos(3, 3), false},
		{"past end", mixed, UTF16, 21, pos(0, 0), true},
		{"negative", mixed, UTF16, -1, pos(0, 0), true},
		{"utf-8 after astral", mixed, UTF8, 5, pos(0, 5), false},
		{"utf-8 inside astral", mixed, UTF8, 3, pos(0, 0), true},
		{"utf-8 inside 2-byte rune", mixed, UTF8, 9, pos(0, 0), true},
		{"utf-32 after astral", mixed, UTF32, 5, pos(0, 2), false},
		{"utf-32 before lone CR", mixed, UTF32, 14, pos(1, 2), false},
		{"empty text", "", UTF16, 0, pos(0, 0), false},
		{"after trailing LF", "a\n", UTF16, 2, pos(1, 0), false},
		{"invalid bytes are runes", "\xff\xe2\x82z", UTF16, 2, pos(0, 2), false},
		{"invalid bytes are runes (utf-8)", "\xff\xe2\x82z", UTF8, 2, pos(0, 2), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NewMapper(tc.text, tc.enc).Position(tc.offset)
			if tc.wantErr {
				if err == nil {
					t.Errorf("Position(%d) in %q (%v) = %s, want an error", tc.offset, tc.text, tc.enc, fmtPos(got))
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("Position(%d) in %q (%v) = %s, %v, want %s", tc.offset, tc.text, tc.enc, fmtPos(got), err, fmtPos(tc.want))
			}
		})
	}
}

func TestMapperRanges(t *testing.T) {
	m := NewMapper(mixed, UTF16)
	r, err := m.Range(1, 8)
	if want := (protocol.Range{Start: pos(0, 1), End: pos(1, 0)}); err != nil || r != want {
		t.Errorf("Range(1, 8) = %v, %v, want %v", r, err, want)
	}
	s, e, err := m.OffsetRange(r)
	if err != nil || s != 1 || e != 8 {
		t.Errorf("OffsetRange(%v) = %d, %d, %v, want 1, 8", r, s, e, err)
	}
	for _, tc := range []struct {
		name       string
		start, end int
	}{{"reversed", 5, 1}, {"end inside CRLF", 0, 7}, {"start inside rune", 2, 5}} {
		t.Run(tc.name, func(t *testing.T) {
			if r, err := m.Range(tc.start, tc.end); err == nil {
				t.Errorf("Range(%d, %d) = %v, want an error", tc.start, tc.end, r)
			}
		})
	}
	for _, tc := range []struct {
		name string
		r    protocol.Range
	}{
		{"reversed", protocol.Range{Start: pos(1, 0), End: pos(0, 1)}},
		{"end past the document", protocol.Range{Start: pos(0, 0), End: pos(9, 0)}},
		{"start past the document", protocol.Range{Start: pos(9, 0), End: pos(9, 0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if s, e, err := m.OffsetRange(tc.r); err == nil {
				t.Errorf("OffsetRange(%v) = %d, %d, want an error", tc.r, s, e)
			}
		})
	}
}

// FuzzMapper checks the Mapper against the reference model in all three
// encodings: every offset's position (or its absence), the round trip
// back to the offset, and every position on every line, clamped or not.
func FuzzMapper(f *testing.F) {
	for _, seed := range []string{
		"", "a", "a\nb", mixed, "😀𝔸\r\ne\u0301\rx", "\xff\xe2\x82\n\xed\xa0\x80", "\r\r\n\n\r",
		"\xf0\x9f\x80\x80", "\x00\x07\x08\x0c\x0d\x0e", "\x12\x13\x14\x13\x0c\x0e\x0d",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 512 {
			return
		}
		for _, text := range []string{string(data), tokens(data)} {
			for _, enc := range encodings {
				checkMapper(t, text, enc)
			}
		}
	})
}

// checkMapper stops at the first difference: a fuzzed text may be long.
func checkMapper(t *testing.T, text string, enc Encoding) {
	t.Helper()
	m := NewMapper(text, enc)
	valid := refPositions(text, enc)
	for o := -1; o <= len(text)+1; o++ {
		got, err := m.Position(o)
		want, ok := valid[o]
		switch {
		case !ok && err == nil:
			t.Fatalf("Position(%d) in %q (%v) = %s, want an error", o, text, enc, fmtPos(got))
		case !ok:
			continue
		case err != nil || got != want:
			t.Fatalf("Position(%d) in %q (%v) = %s, %v, want %s", o, text, enc, fmtPos(got), err, fmtPos(want))
		}
		if back, err := m.Offset(got); err != nil || back != o {
			t.Fatalf("Offset(Position(%d)) in %q (%v) = %d, %v, want %d", o, text, enc, back, err, o)
		}
	}
	lines := refSplit(text)
	for line := 0; line <= len(lines)+1; line++ {
		chars := []uint32{math.MaxUint32}
		units := 0
		if line < len(lines) {
			for _, r := range refRunes(lines[line].content, enc) {
				units += r.units
			}
		}
		for c := 0; c <= units+2; c++ {
			chars = append(chars, uint32(c))
		}
		for _, c := range chars {
			p := pos(uint32(line), c)
			got, err := m.Offset(p)
			want, ok := refOffset(lines, len(text), p, enc)
			switch {
			case !ok && err == nil:
				t.Fatalf("Offset(%s) in %q (%v) = %d, want an error", fmtPos(p), text, enc, got)
			case ok && (err != nil || got != want):
				t.Fatalf("Offset(%s) in %q (%v) = %d, %v, want %d", fmtPos(p), text, enc, got, err, want)
			}
		}
	}
}

// bigText is about n bytes of source-like lines, some with non-ASCII.
func bigText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		if i%5 == 0 {
			fmt.Fprintf(&b, "\t// commentaire %d: naïve café 😀 — 𝔸\n", i)
		} else {
			fmt.Fprintf(&b, "\tx%d := compute(x%d, %q)\n", i, i-1, "value")
		}
	}
	return b.String()
}

func BenchmarkOffset(b *testing.B) {
	text := bigText(10 << 20)
	lines := uint32(strings.Count(text, "\n"))
	for _, enc := range encodings {
		b.Run(enc.String(), func(b *testing.B) {
			m := NewMapper(text, enc)
			m.Offset(pos(0, 0)) // index the lines outside the loop
			i := uint32(0)
			for b.Loop() {
				i = (i + 7919) % lines
				if _, err := m.Offset(pos(i, 30)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("new-mapper", func(b *testing.B) { // the one-off cost of the line index
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			if _, err := NewMapper(text, UTF16).Offset(pos(lines/2, 30)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Test-only helpers: nothing in the server calls them.

// ParseEncoding returns the Encoding named by a PositionEncodingKind value
// ("utf-16", "utf-8", "utf-32"), and false for any other string.
func ParseEncoding(s string) (Encoding, bool) {
	switch s {
	case "utf-16":
		return UTF16, true
	case "utf-8":
		return UTF8, true
	case "utf-32":
		return UTF32, true
	}
	return UTF16, false
}

// Range returns the range of the bytes [start, end).
func (m *Mapper) Range(start, end int) (protocol.Range, error) {
	if end < start {
		return protocol.Range{}, fmt.Errorf("byte range %d-%d ends before it starts", start, end)
	}
	s, err := m.Position(start)
	if err != nil {
		return protocol.Range{}, err
	}
	e, err := m.Position(end)
	if err != nil {
		return protocol.Range{}, err
	}
	return protocol.Range{Start: s, End: e}, nil
}
