package contextwin

import "testing"

// TestNewBlocks: a part appended to the recap carries only the map's file
// blocks the recap does not hold word for word.
func TestNewBlocks(t *testing.T) {
	news := "a.go\n  func A\n  func B\nb.go\n  func C\nc.go\n"
	carried := "…learnt:\na.go\n  func A\n  func B\n\nFolded since:"
	if got, want := newBlocks(news, carried), "b.go\n  func C\nc.go"; got != want {
		t.Errorf("newBlocks = %q, want %q", got, want)
	}
	if got := newBlocks("a.go\n  func A", carried); got != "" {
		t.Errorf("newBlocks of what is carried = %q, want nothing", got)
	}
	// A block that changed is new, whole.
	if got, want := newBlocks("a.go\n  func A\n  func Z\n", carried), "a.go\n  func A\n  func Z"; got != want {
		t.Errorf("newBlocks = %q, want %q", got, want)
	}
}
