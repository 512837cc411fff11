package tools

import (
	"testing"

	"github.com/sourcegraph/go-diff/diff"
)

// The edit tool parses the model's unified diffs with go-diff v0.10.0
// (udiff.go). These are the library's known gaps, pinned so
// that the edit tool's own checks stay necessary and an upgrade that
// changes them is noticed: hunk counts are not checked against the body, a
// header without spaces parses to nothing, and a diff without file headers
// yields no files — all without an error. The gaps after those are the
// rest of what repairDiff works around.
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
	// The gaps below are the other reasons for repairDiff (udiff.go).
	t.Run("a blank line is a body line", func(t *testing.T) {
		files, err := diff.ParseMultiFileDiff([]byte("--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,2 @@\n-a\n\n+b\n"))
		if err != nil || len(files) != 1 || len(files[0].Hunks) != 1 || string(files[0].Hunks[0].Body) != "-a\n\n+b\n" {
			t.Errorf("ParseMultiFileDiff(blank body line) = %v, %v; want one hunk whose body keeps the blank line", files, err)
		}
	})
	t.Run("prose ends the file and drops the hunks after it", func(t *testing.T) {
		files, err := diff.ParseMultiFileDiff([]byte("--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-a\n+b\nAnd then:\n@@ -5 +5 @@\n-c\n+d\n"))
		if err != nil || len(files) != 1 || len(files[0].Hunks) != 1 {
			t.Errorf("ParseMultiFileDiff(prose between hunks) = %v, %v; want one file with one hunk and no error", files, err)
		}
	})
	t.Run("text after a tab must be a timestamp", func(t *testing.T) {
		files, err := diff.ParseMultiFileDiff([]byte("--- a/x.go\t(working copy)\n+++ b/x.go\t(working copy)\n@@ -1 +1 @@\n-a\n+b\n"))
		if err == nil {
			t.Errorf("ParseMultiFileDiff(svn headers) = %v, nil; want an error", files)
		}
	})
	t.Run("a hunk ending in --- and +++ lines ends at them", func(t *testing.T) {
		files, err := diff.ParseMultiFileDiff([]byte("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n--- x\n+++ y\n@@ -5 +5 @@\n-a\n+b\n"))
		if err != nil || len(files) != 2 || len(files[0].Hunks) != 1 || len(files[0].Hunks[0].Body) != 0 || files[1].OrigName != "x" {
			t.Errorf("ParseMultiFileDiff(body like a file header) = %v, %v; want an empty hunk, then a file x", files, err)
		}
	})
	t.Run("a file without a new name has no hunks", func(t *testing.T) {
		files, err := diff.ParseMultiFileDiff([]byte("--- a/f\n+++ \n@@ -1 +1 @@\n-a\n+b\n"))
		if err != nil || len(files) != 1 || files[0].NewName != "" || len(files[0].Hunks) != 0 {
			t.Errorf("ParseMultiFileDiff(+++ without a name) = %v, %v; want one file with no hunk and no error", files, err)
		}
	})
	t.Run("a well-formed diff parses", func(t *testing.T) {
		files, err := diff.ParseMultiFileDiff([]byte("--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n"))
		if err != nil || len(files) != 1 || len(files[0].Hunks) != 1 || files[0].NewName != "b/x.go" {
			t.Fatalf("ParseMultiFileDiff(well formed) = %v, %v; want one file with one hunk", files, err)
		}
	})
}
