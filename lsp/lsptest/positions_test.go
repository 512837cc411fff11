package lsptest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLines(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []lineSpan
	}{
		{"", []lineSpan{{0, 0, 0}}},
		{"a", []lineSpan{{0, 1, 1}}},
		{"a\n", []lineSpan{{0, 1, 2}, {2, 2, 2}}},
		{"a\r\nb\rc\n\nd", []lineSpan{{0, 1, 3}, {3, 4, 5}, {5, 6, 7}, {7, 7, 8}, {8, 9, 9}}},
		{"\r", []lineSpan{{0, 0, 1}, {1, 1, 1}}},
	} {
		if d := cmp.Diff(tc.want, lines(tc.text), cmp.AllowUnexported(lineSpan{})); d != "" {
			t.Errorf("lines(%q) differs (-want +got):\n%s", tc.text, d)
		}
	}
	text := "ab\r\ncd\ref"
	for _, tc := range []struct{ offset, num, start, next int }{
		{0, 0, 0, 4}, {2, 0, 0, 4}, {3, 0, 0, 4}, {4, 1, 4, 7}, {7, 2, 7, 9}, {9, 2, 7, 9},
	} {
		if num, l := lineAt(text, tc.offset); num != tc.num || l.start != tc.start || l.next != tc.next {
			t.Errorf("lineAt(%q, %d) = %d, %v, want line %d over [%d, %d)", text, tc.offset, num, l, tc.num, tc.start, tc.next)
		}
	}
}
