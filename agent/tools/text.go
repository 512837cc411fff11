package tools

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// sniffLen is how much of a file decides whether it is text.
const sniffLen = 8000

// isBinary reports whether data looks like something other than text: a
// NUL byte, or many bytes that are not UTF-8, near its start.
func isBinary(data []byte) bool {
	sample := data[:min(len(data), sniffLen)]
	if bytes.IndexByte(sample, 0) >= 0 {
		return true
	}
	bad := 0
	for i := 0; i < len(sample); {
		r, w := utf8.DecodeRune(sample[i:])
		if r == utf8.RuneError && w == 1 && len(sample)-i >= utf8.UTFMax {
			bad++
		}
		i += w
	}
	return bad*10 > len(sample)
}

// splitLines splits text into lines without their terminators ("\n" or
// "\r\n"). A final terminator does not start another line; empty text
// has no lines.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// clip shortens s to at most n bytes (at a rune boundary) and says how
// much was left out.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s … [%d more characters]", s[:cut], utf8.RuneCountInString(s[cut:]))
}

// validUTF8 replaces invalid bytes, which JSON cannot carry.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// headTail keeps the first and last parts of s within about n bytes, with
// a marker saying what was left out and where the whole is.
func headTail(s string, n int, whole string) string {
	if len(s) <= n {
		return s
	}
	head, tail := n*2/3, n/3
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	start := len(s) - tail
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	omitted := strings.Count(s[head:start], "\n")
	return fmt.Sprintf("%s\n… [%s left out here; the whole output is in %s]\n%s", s[:head], plural(omitted, "line"), whole, s[start:])
}
