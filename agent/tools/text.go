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

// runeEnds returns the longest prefix of s of at most head bytes that
// ends on a rune boundary, and the longest suffix of at most tail bytes
// that starts on one. It is the package's one rune-safe cut; clipWithCount and
// headTail say around it what was left out.
func runeEnds(s string, head, tail int) (string, string) {
	h := min(max(head, 0), len(s))
	for h > 0 && h < len(s) && !utf8.RuneStart(s[h]) {
		h--
	}
	t := len(s) - min(max(tail, 0), len(s))
	for t < len(s) && !utf8.RuneStart(s[t]) {
		t++
	}
	return s[:h], s[t:]
}

// clipWithCount shortens s to at most n bytes, cut at a rune boundary,
// and says how many characters were left out; a shorter s is kept whole.
// It is the package's one clip: the other shortening helpers (headTail,
// diffHead) keep whole parts and name what they keep.
func clipWithCount(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, _ := runeEnds(s, n, 0)
	return fmt.Sprintf("%s … [%d more characters]", head, utf8.RuneCountInString(s[len(head):]))
}

// validUTF8 replaces invalid bytes, which JSON cannot carry.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// plural writes the count n with word, with an s unless n is 1: "1 line",
// "3 lines".
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
	head, tail := runeEnds(s, n*2/3, n/3)
	omitted := strings.Count(s[len(head):len(s)-len(tail)], "\n")
	return fmt.Sprintf("%s\n… [%s left out here; the whole output is in %s]\n%s", head, plural(omitted, "line"), whole, tail)
}
