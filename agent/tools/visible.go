package tools

import (
	"fmt"
	"strings"
	"unicode"
)

// Visible is s as a question shows it to the user: whole, never cut, with
// what a terminal or a prompt would hide made visible — a control
// character as ␊ (newline), ␉ (tab) or \xNN, and a character that
// reorders or hides text (bidi overrides and isolates, zero-width
// characters) as <U+XXXX> — so that what the user reads is what runs.
func Visible(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString("␊")
		case r == '\t':
			b.WriteString("␉")
		case r == '\r':
			b.WriteString("␍")
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case hidden(r):
			fmt.Fprintf(&b, "<U+%04X>", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// hidden reports whether r changes how the text around it reads without
// showing itself: the bidi controls, zero-width characters, and other
// format characters (Unicode category Cf) and C1 controls.
func hidden(r rune) bool {
	return unicode.Is(unicode.Cf, r) || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029
}
