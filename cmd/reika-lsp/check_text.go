package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// checkWidth is the widest line check prints: a terminal of 100 columns
// shows every line whole.
const checkWidth = 100

// maxAligned is the widest value whose row keeps its source in the
// aligned column; a longer value is wrapped under itself, its source
// after it.
const maxAligned = 40

// factRow is one row of check's tables: a name, its value and where the
// value came from ("" for none).
type factRow struct{ key, value, source string }

// printRows prints rows as a table of at most checkWidth columns, each
// line starting with indent: the names in a column, the values in the
// next, the sources in parentheses in a third, aligned while the values
// are short. A longer row wraps at spaces, its following lines under its
// value.
func printRows(w io.Writer, indent string, rows []factRow) {
	keyW, valueW := 0, 0
	for _, r := range rows {
		keyW = max(keyW, width(r.key))
		if v := width(r.value); v <= maxAligned {
			valueW = max(valueW, v)
		}
	}
	keyW += 2
	head := len(indent) + keyW
	for _, r := range rows {
		text := r.value
		if r.source != "" {
			if width(r.value) <= valueW {
				text += strings.Repeat(" ", valueW-width(r.value))
			}
			text += "  (" + r.source + ")"
		}
		lines := wrapWords(text, checkWidth-head)
		fmt.Fprintf(w, "%s%s%s\n", indent, padRight(r.key, keyW), strings.TrimRight(lines[0], " "))
		for _, l := range lines[1:] {
			fmt.Fprintf(w, "%s%s\n", strings.Repeat(" ", head), l)
		}
	}
}

// printItem prints "  - text" wrapped to checkWidth, its following lines
// under the text.
func printItem(w io.Writer, text string) {
	lines := wrapWords(text, checkWidth-4)
	fmt.Fprintf(w, "  - %s\n", lines[0])
	for _, l := range lines[1:] {
		fmt.Fprintf(w, "    %s\n", l)
	}
}

// wrapWords breaks s into lines of at most n columns at spaces (a run of
// spaces inside a line is kept: it aligns a column); a word longer than n
// is cut. There is always at least one line.
func wrapWords(s string, n int) []string {
	n = max(n, 20)
	var lines []string
	for width(s) > n {
		cut := strings.LastIndexByte(prefixCols(s, n+1), ' ')
		if cut <= 0 {
			cut = len(prefixCols(s, n))
			lines = append(lines, s[:cut])
			s = s[cut:]
			continue
		}
		lines = append(lines, strings.TrimRight(s[:cut], " "))
		s = strings.TrimLeft(s[cut:], " ")
	}
	return append(lines, s)
}

// prefixCols is the longest prefix of s of at most n characters.
func prefixCols(s string, n int) string {
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}

// width is the columns s takes: its characters (check prints no wide
// ones).
func width(s string) int { return utf8.RuneCountInString(s) }

func padRight(s string, n int) string {
	return s + strings.Repeat(" ", max(0, n-width(s)))
}
