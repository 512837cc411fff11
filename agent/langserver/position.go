package langserver

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf16"

	"go.lsp.dev/protocol"
)

// Positions: the model's are 1-based lines and 1-based byte columns; the
// servers' are 0-based lines and UTF-16 columns (what every server
// understands without negotiating the encoding).

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

// utf16Col is the UTF-16 column of the byte offset col in line.
func utf16Col(line string, col int) uint32 {
	n := 0
	for i, r := range line {
		if i >= col {
			break
		}
		n += max(utf16.RuneLen(r), 1)
	}
	return uint32(n)
}

// byteCol is the byte offset in line of the UTF-16 column col.
func byteCol(line string, col uint32) int {
	n := uint32(0)
	for i, r := range line {
		if n >= col {
			return i
		}
		n += uint32(max(utf16.RuneLen(r), 1))
	}
	return len(line)
}

// position is the server's position of the model's place in text: line
// (1-based) and column (1-based bytes), or, with column 0, the first
// occurrence of symbol on the line as a whole word.
func position(text string, line, column int, symbol string) (protocol.Position, error) {
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
	return protocol.Position{Line: uint32(line - 1), Character: utf16Col(l, col)}, nil
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
