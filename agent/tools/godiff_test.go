package tools

import (
	"testing"

	"github.com/sourcegraph/go-diff/diff"
)

// The edit tool parses the model's unified diffs with go-diff v0.10.0
// (udiff.go). These are the library's known gaps (ENGINES.md), pinned so
// that the edit tool's own checks stay necessary and an upgrade that
// changes them is noticed: hunk counts are not checked against the body, a header without
// spaces parses to nothing, and a diff without file headers yields no
// files — all without an error.
func TestGoDiffKnownGaps(t *testing.T) {
	t.Run("hunk counts are not checked", func(t *testing.T) {
		hunks, err := diff.ParseHunks([]byte("@@ -1,5 +1,5 @@\n-a\n+b\n"))
		if err != nil || len(hunks) != 1 || hunks[0].OrigLines != 5 {
			t.Errorf("ParseHunks(short body) = %d hunks, %v; want one claiming 5 lines, no error", len(hunks), err)
		}
	})
	t.Run("a header without spaces yields no hunk", func(t *testing.T) {
		files, err := diff.ParseMultiFileDiff([]byte("--- a/x.go\n+++ b/x.go\n@@-1,2 +1,2@@\n-a\n+b\n c\n"))
		if err != nil || len(files) != 1 || len(files[0].Hunks) != 0 {
			t.Errorf("ParseMultiFileDiff(@@-1,2 +1,2@@) = %v, %v; want one file with no hunk and no error", files, err)
		}
	})
	t.Run("no file headers yields no file", func(t *testing.T) {
		files, err := diff.ParseMultiFileDiff([]byte("@@ -1 +1 @@\n-a\n+b\n"))
		if err != nil || len(files) != 0 {
			t.Errorf("ParseMultiFileDiff(no ---/+++) = %d files, %v; want none and no error", len(files), err)
		}
	})
	t.Run("a well-formed diff parses", func(t *testing.T) {
		files, err := diff.ParseMultiFileDiff([]byte("--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n"))
		if err != nil || len(files) != 1 || len(files[0].Hunks) != 1 || files[0].NewName != "b/x.go" {
			t.Fatalf("ParseMultiFileDiff(well formed) = %v, %v; want one file with one hunk", files, err)
		}
	})
}
