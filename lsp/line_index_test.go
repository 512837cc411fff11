package lsp

import (
	"slices"
	"testing"
)

// spliceStarts gives the line starts lineStarts finds in the new text,
// whatever the change does to line breaks: "\r" and "\n" brought together
// or apart, breaks deleted or typed at either end of the text.
func TestSpliceStarts(t *testing.T) {
	for _, tc := range []struct {
		text       string
		start, end int
		insert     string
	}{
		{"a\nb\nc", 2, 2, "x"},
		{"a\nb\nc", 0, 0, "\n"},
		{"a\nb\nc", 0, 2, ""},
		{"a\r\nb", 1, 2, ""},     // "\r" deleted: "\n" alone
		{"a\r\nb", 2, 2, "x"},    // "\r" and "\n" apart
		{"a\rb", 2, 2, "\n"},     // a lone "\r" gets its "\n"
		{"a\r", 2, 2, "\nb"},     // at the end
		{"a\rb", 1, 2, "\r\n\r"}, // replacing the break itself
		{"\r\n", 0, 2, "x"},
		{"", 0, 0, "\r\n\n\r"},
		{"a\nb\nc\nd", 1, 6, ""},
	} {
		old := tc.text
		text := old[:tc.start] + tc.insert + old[tc.end:]
		got := spliceStarts(lineStarts(old), text, tc.start, tc.end, len(tc.insert))
		if want := lineStarts(text); !slices.Equal(got, want) {
			t.Errorf("spliceStarts(%q → %q) = %v, want %v", old, text, got, want)
		}
	}
}

// Against lineStarts over the whole text, the reference.
func FuzzSpliceStarts(f *testing.F) {
	f.Add("a\r\nb\rc\n", uint16(2), uint16(1), "\n\r")
	f.Add("\r\r\n\n", uint16(1), uint16(2), "")
	f.Fuzz(func(t *testing.T, old string, at, del uint16, insert string) {
		start := int(at) % (len(old) + 1)
		end := start + int(del)%(len(old)-start+1)
		text := old[:start] + insert + old[end:]
		got := spliceStarts(lineStarts(old), text, start, end, len(insert))
		if want := lineStarts(text); !slices.Equal(got, want) {
			t.Fatalf("spliceStarts(%q → %q) = %v, want %v", old, text, got, want)
		}
	})
}
