package tools

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// lcs is the reference: the length of a longest common subsequence.
func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

// TestDiffLinesAgainstLCS checks on random texts that the edit script
// covers both sides in order and keeps as many lines as a longest common
// subsequence: it is a shortest script.
func TestDiffLinesAgainstLCS(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"a\n", "b\n", "c\n", "d\n", "e"}
	gen := func() []string {
		out := make([]string, rng.IntN(12))
		for i := range out {
			out[i] = words[rng.IntN(len(words))]
		}
		return out
	}
	for range 3000 {
		a, b := gen(), gen()
		edits := diffLines(a, b)
		ai, bi, kept := 0, 0, 0
		var rebuilt []string
		for _, e := range edits {
			if e.a0 != ai || e.b0 != bi {
				t.Fatalf("diffLines(%q, %q) = %+v: a gap at a%d b%d", a, b, edits, ai, bi)
			}
			switch e.kind {
			case opEqual:
				for k := range e.a1 - e.a0 {
					if a[e.a0+k] != b[e.b0+k] {
						t.Fatalf("diffLines(%q, %q) = %+v: unequal lines kept", a, b, edits)
					}
				}
				kept += e.a1 - e.a0
				rebuilt = append(rebuilt, a[e.a0:e.a1]...)
			case opInsert:
				rebuilt = append(rebuilt, b[e.b0:e.b1]...)
			}
			ai, bi = e.a1, e.b1
		}
		if ai != len(a) || bi != len(b) || strings.Join(rebuilt, "") != strings.Join(b, "") {
			t.Fatalf("diffLines(%q, %q) = %+v: does not rebuild b", a, b, edits)
		}
		if want := lcs(a, b); kept != want {
			t.Fatalf("diffLines(%q, %q) keeps %d lines, want %d (the LCS)", a, b, kept, want)
		}
	}
}

func TestUnifiedDiff(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     string
	}{
		{"one change with context", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n",
			"--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"},
		{"two hunks far apart", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "one\n2\n3\n4\n5\n6\n7\n8\n9\nten\n",
			"--- a/f\n+++ b/f\n@@ -1,4 +1,4 @@\n-1\n+one\n 2\n 3\n 4\n@@ -7,4 +7,4 @@\n 7\n 8\n 9\n-10\n+ten\n"},
		{"close changes share a hunk", "1\n2\n3\n4\n5\n6\n7\n", "one\n2\n3\n4\n5\n6\nseven\n",
			"--- a/f\n+++ b/f\n@@ -1,7 +1,7 @@\n-1\n+one\n 2\n 3\n 4\n 5\n 6\n-7\n+seven\n"},
		{"insertion into an empty file", "", "a\n",
			"--- a/f\n+++ b/f\n@@ -0,0 +1,1 @@\n+a\n"},
		{"newline added at the end", "a\nb", "a\nb\n",
			"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"},
		{"no change", "a\n", "a\n", ""},
	}
	for _, tt := range tests {
		a, b := splitKeep(tt.old), splitKeep(tt.new)
		if got := unifiedDiff("f", a, b, diffLines(a, b), 3); got != tt.want {
			t.Errorf("%s: unifiedDiff(%q, %q) =\n%s\nwant\n%s", tt.name, tt.old, tt.new, got, tt.want)
		}
	}
}

func TestChangeHunks(t *testing.T) {
	old, new := "keep\nold1\nold2\nkeep\ntail\n", "keep\nnew\nkeep\ntail\nadded\n"
	a, b := splitKeep(old), splitKeep(new)
	got := changeHunks(a, b, diffLines(a, b))
	want := []Hunk{{OldStart: 5, OldEnd: 15, Text: "new\n"}, {OldStart: 25, OldEnd: 25, Text: "added\n"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("changeHunks(%q → %q) = %+v, want %+v", old, new, got, want)
	}
	if applied := got.Apply(old); applied != new {
		t.Errorf("applying changeHunks(%q → %q) = %q", old, new, applied)
	}
}

func TestHunksApplyWritten(t *testing.T) {
	old := "one\ntwo\nthree\n"
	hs := Hunks{
		{OldStart: 0, OldEnd: 0, Text: "zero\n"},
		{OldStart: 4, OldEnd: 8, Text: ""},
		{OldStart: 8, OldEnd: 13, Text: "THREE!"},
		{OldStart: 14, OldEnd: 14, Text: "four\n"},
	}
	if i := hs.Misplaced(len(old)); i != -1 {
		t.Fatalf("Misplaced(%d) = %d, want -1", len(old), i)
	}
	got := hs.Apply(old)
	if want := "zero\none\nTHREE!\nfour\n"; got != want {
		t.Errorf("Apply(%q) = %q, want %q", old, got, want)
	}
	for i, sp := range hs.Written() {
		if w := got[sp[0]:sp[1]]; w != hs[i].Text {
			t.Errorf("Written()[%d] = %v holds %q, want %q", i, sp, w, hs[i].Text)
		}
	}
	for _, tt := range []struct {
		hs   Hunks
		want int
	}{
		{Hunks{{OldStart: 4, OldEnd: 5}, {OldStart: 2, OldEnd: 3}}, 1},
		{Hunks{{OldStart: 3, OldEnd: 2}}, 0},
		{Hunks{{OldStart: 0, OldEnd: len(old) + 1}}, 0},
		{Hunks{{OldStart: 1, OldEnd: 1}, {OldStart: 1, OldEnd: 1}}, -1},
	} {
		if got := tt.hs.Misplaced(len(old)); got != tt.want {
			t.Errorf("%+v.Misplaced(%d) = %d, want %d", tt.hs, len(old), got, tt.want)
		}
	}
}
