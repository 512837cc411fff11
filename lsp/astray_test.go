package lsp

import "testing"

// A line to check is named as it is when the run ends: moved by the lines
// the user added or removed above it since.
func TestLineMarkIn(t *testing.T) {
	text := "a\nb\nc\nd\ne\nf\n"
	m := lineMark{text: text, line: 5} // "e"
	for _, tt := range []struct {
		name, now string
		want      int
	}{
		{"unchanged", text, 5},
		{"two lines typed at the top", "x\ny\n" + text, 7},
		{"a line removed above", "a\nc\nd\ne\nf\n", 4},
		{"a line typed below", text + "g\n", 5},
		{"the line itself changed", "a\nb\nc\nd\nE\nf\n", 5},
		{"a line typed just above it", "a\nb\nc\nd\nnew\ne\nf\n", 6},
		{"a line typed above and the line changed", "a\nnew\nb\nc\nd\nE\nf\n", 6},
		{"it and the line above replaced", "a\nb\nc\nD\nE\nf\n", 4},
	} {
		if got := m.in(tt.now); got != tt.want {
			t.Errorf("%s: lineMark{line 5}.in = %d, want %d", tt.name, got, tt.want)
		}
	}
}
