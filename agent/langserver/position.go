package langserver

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"go.lsp.dev/protocol"
)

// Positions: the model's are 1-based lines and 1-based byte columns; the
// servers' are 0-based lines and columns in the encoding negotiated in
// initialize (the client offers UTF-8 and UTF-16, general.positionEncodings;
// the server's positionEncoding picks one), UTF-16 when the server says
// nothing, as every server understands it.

// encoding is how a server counts the characters of a line.
type encoding int

const (
	encUTF16 encoding = iota // UTF-16 code units: the default
	encUTF8                  // bytes
	encUTF32                 // code points
)

// offeredEncodings are the encodings the client offers, preferred first:
// bytes need no conversion.
var offeredEncodings = []string{"utf-8", "utf-16"}

// parseEncoding reads a server's positionEncoding; "" and names it does
// not know are UTF-16.
func parseEncoding(s string) encoding {
	switch s {
	case "utf-8":
		return encUTF8
	case "utf-32":
		return encUTF32
	}
	return encUTF16
}

func (e encoding) String() string {
	return [...]string{"utf-16", "utf-8", "utf-32"}[e]
}

// lineOf returns line n (0-based) of text without its newline, "" past the
// end.
func lineOf(text string, n int) string {
	for i := 0; i < n; i++ {
		j := strings.IndexByte(text, '\n')
		if j < 0 {
			return ""
		}
		text = text[j+1:]
	}
	if j := strings.IndexByte(text, '\n'); j >= 0 {
		text = text[:j]
	}
	return strings.TrimSuffix(text, "\r")
}

// width is how many units of enc the rune r takes.
func (e encoding) width(r rune) uint32 {
	if e == encUTF16 {
		return uint32(max(utf16.RuneLen(r), 1))
	}
	return 1
}

// units is the column in enc of the byte offset col in line.
func units(line string, col int, enc encoding) uint32 {
	if enc == encUTF8 {
		return uint32(min(max(col, 0), len(line)))
	}
	n := uint32(0)
	for i, r := range line {
		if i >= col {
			break
		}
		n += enc.width(r)
	}
	return n
}

// byteCol is the byte offset in line of the column col in enc; a column
// inside a character is that character's start.
func byteCol(line string, col uint32, enc encoding) int {
	if enc == encUTF8 {
		c := min(int(col), len(line))
		for c > 0 && c < len(line) && !utf8.RuneStart(line[c]) {
			c--
		}
		return c
	}
	n := uint32(0)
	for i, r := range line {
		if n >= col {
			return i
		}
		if n += enc.width(r); n > col {
			return i
		}
	}
	return len(line)
}

// position is the server's position (in enc) of the model's place in
// text: line (1-based) and column (1-based bytes), or, with column 0, the
// first occurrence of symbol on the line as a whole word.
func position(text string, line, column int, symbol string, enc encoding) (protocol.Position, error) {
	if line < 1 {
		return protocol.Position{}, fmt.Errorf("line %d: lines count from 1", line)
	}
	l := lineOf(text, line-1)
	col := column - 1
	if column <= 0 {
		col = wordIndex(l, symbol)
		if col < 0 {
			return protocol.Position{}, fmt.Errorf("%q is not on line %d (%q): give its column, or the line where it is", symbol, line, strings.TrimSpace(l))
		}
	}
	return protocol.Position{Line: uint32(line - 1), Character: units(l, col, enc)}, nil
}

// wordIndex is the byte offset of the first occurrence of word in line
// that is not part of a longer identifier, -1 when there is none (or word
// is empty).
func wordIndex(line, word string) int {
	if word == "" {
		return -1
	}
	for from := 0; ; {
		i := strings.Index(line[from:], word)
		if i < 0 {
			return -1
		}
		i += from
		end := i + len(word)
		if (i == 0 || !isIdent(line[i-1])) && (end == len(line) || !isIdent(line[end])) {
			return i
		}
		from = i + 1
	}
}

func isIdent(b byte) bool {
	return b == '_' || b == '$' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
}

// relPath is abs relative to root when inside it, else abs.
func relPath(root, abs string) string {
	if root != "" && inside(root, abs) {
		if rel, err := filepath.Rel(root, abs); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return abs
}
