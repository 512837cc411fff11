package contextwin

import "unicode/utf8"

// All sizes in this package are in bytes of UTF-8 text ("chars"): the
// estimator's 4-chars-a-token baseline is measured in bytes, and so is
// every character budget. Nothing here ever cuts a rune in two.

// clip returns the longest prefix of s that is at most n bytes and ends on
// a rune boundary.
func clip(s string, n int) string {
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

// clipTail returns the longest suffix of s that is at most n bytes and
// starts on a rune boundary.
func clipTail(s string, n int) string {
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
