package lsp

import (
	"slices"
	"testing"
)

func TestFolders(t *testing.T) {
	var f folders
	f.set([]string{"/w/a", "/w/b"})
	f.change([]string{"/w/c", "/w/a"}, []string{"/w/b"})
	if got, want := f.all(), []string{"/w/a", "/w/c"}; !slices.Equal(got, want) {
		t.Errorf("folders after a change = %q, want %q", got, want)
	}
	if got, ok := f.first(); !ok || got != "/w/a" {
		t.Errorf("first() = %q, %v, want /w/a, true", got, ok)
	}
	for _, tc := range []struct{ path, want string }{
		{"/w/a/pkg/x.go", "pkg/x.go"},
		{"/w/c/y.go", "y.go"},
		{"/elsewhere/z.go", "/elsewhere/z.go"},
		{"/w/ab/z.go", "/w/ab/z.go"}, // a sibling whose name starts alike is outside
	} {
		if got := f.relative(tc.path); got != tc.want {
			t.Errorf("relative(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
	f.set(nil)
	if _, ok := f.first(); ok {
		t.Error("first() of no folders reports one")
	}
}
