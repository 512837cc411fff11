package agent

import (
	"fmt"
	"testing"
	"time"
)

// The saved files of one engine and workspace are at most slotFilesKept:
// a session keeps its own file, a new session takes a new name until
// there are that many, then the oldest; a cap on their bytes takes the
// oldest sooner.
func TestSlotIndexPrunes(t *testing.T) {
	x := &slotIndex{path: slotIndexPath(t.TempDir())}
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	save := func(key, session string, bytes, minute int) string {
		f := x.claim(key, session)
		if err := x.record(slotSave{File: f, Key: key, Session: session, Bytes: bytes, At: t0.Add(time.Duration(minute) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
		return f
	}
	files := map[string]bool{}
	for i := range 5 {
		files[save("k", fmt.Sprintf("s%d", i), 100, i)] = true
	}
	if len(files) != slotFilesKept {
		t.Errorf("5 sessions saved to %d files, want %d", len(files), slotFilesKept)
	}
	if a, b := save("k", "s4", 100, 10), save("k", "s4", 100, 11); a != b {
		t.Errorf("a session's second save went to %s, its first to %s", b, a)
	}
	if f := save("other", "s0", 100, 12); files[f] {
		t.Errorf("another workspace's save took %s", f)
	}
	// Over the cap, a new session takes the oldest file of its key.
	y := &slotIndex{path: slotIndexPath(t.TempDir())}
	x = y
	first := save("k", "big", slotBytesCap, 0)
	if f := save("k", "next", 10, 1); f != first {
		t.Errorf("past the byte cap a new save went to %s, want the oldest %s", f, first)
	}
	if e, ok := x.lookup(first); !ok || e.Session != "next" {
		t.Errorf("lookup(%s) = %+v, %v; want the new session's", first, e, ok)
	}
}
