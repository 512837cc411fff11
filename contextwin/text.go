package contextwin

import "unicode/utf8"

// All sizes in this package are in bytes of UTF-8 text ("chars"): the
// estimator's 4-chars-a-token baseline is measured in bytes, and so is
// every character budget. Nothing here ever cuts a rune in two.

// headUpTo returns the longest prefix of s that is at most n bytes and
// ends on a rune boundary: s cut to n bytes, with no marker.
func headUpTo(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// tailUpTo returns the longest suffix of s that is at most n bytes and
// starts on a rune boundary: the end of s kept in n bytes, with no marker.
func tailUpTo(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
