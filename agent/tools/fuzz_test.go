package tools

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// FuzzApplyDiff checks diff application against the simplest reference:
// the edited file itself. A random file gets a random edit; the diff our
// differ writes for it, applied to the file, must give the edited file
// back — with the diff's line numbers intact on any file, and with them
// wrong (and the hunks shuffled) on a file whose lines are all different,
// where the context alone must place each hunk. The byte-offset hunks of
// the proposal must rebuild the edited file too.
func FuzzApplyDiff(f *testing.F) {
	for i := range 8 {
		f.Add(uint64(i), uint64(i*7+1), i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, s1, s2 uint64, unique bool) {
		rng := rand.New(rand.NewPCG(s1, s2))
		old := randomFile(rng, unique)
		edited := randomEdit(rng, old, unique)
		a, b := splitKeep(old), splitKeep(edited)
		edits := diffLines(a, b)
		if got := changeHunks(a, b, edits).Apply(old); got != edited {
			t.Fatalf("hunks of %q → %q rebuild %q", old, edited, got)
		}
		ctx := rng.IntN(4)
		if unique {
			ctx = 1 + rng.IntN(3) // a hunk without context has only its numbers
		}
		d := unifiedDiff("f.go", a, b, edits, ctx)
		if d == "" {
			return
		}
		if unique {
			d = scramble(d, rng)
		}
		got, err := applyText(old, d)
		if err != nil {
			t.Fatalf("apply(%q, diff) = %v; diff:\n%s", old, err, d)
		}
		if got != edited {
			t.Fatalf("apply(%q, diff) = %q, want %q; diff:\n%s", old, got, edited, d)
		}
	})
}

// FuzzParseDiff checks that whatever a model sends as a diff, go-diff
// reads the repaired diff as it was written: parseDiff either returns
// files that all have hunks, or an error that is not errMisread.
func FuzzParseDiff(f *testing.F) {
	for _, seed := range []string{
		"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n--- x\n+++ y\n@@ -5 +5 @@\n-a\n+b\n",
		"--- a/f\t(working copy)\n+++ b/f\t(working copy)\n@@-1 +1@@\n-a\n\n+b\nprose\n@@ @@\n-c\n+d\n",
		"diff --git a/f\tg b/f\tg\n@@ -1 +1 @@\n-a\n+b\n\\ No newline at end of file\n",
		"```diff\n--- \n+++ \n@@ -0,0 +1 @@\n+x\n```\n",
		"--- \"a/f g\"\n+++ \"b/f g\"\n@@ -99999999999 +1 @@\n a\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		files, err := parseDiff(text)
		if errors.Is(err, errMisread) {
			t.Fatalf("parseDiff(%q) = %v", text, err)
		}
		for _, fd := range files {
			if len(fd.hunks) == 0 {
				t.Fatalf("parseDiff(%q) gives %+v, a file without hunks", text, fd)
			}
		}
	})
}

// randomFile makes up to 40 lines; with unique set, all different. Lines
// may be empty, indented, or start with characters that mean something in
// a diff; the last may lack its newline.
func randomFile(rng *rand.Rand, unique bool) string {
	var b strings.Builder
	n := rng.IntN(40)
	for i := range n {
		b.WriteString(randomLine(rng, unique, fmt.Sprintf("o%d", i)))
		if i < n-1 || rng.IntN(4) > 0 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func randomLine(rng *rand.Rand, unique bool, id string) string {
	if unique {
		return fmt.Sprintf("%sL%s %s", strings.Repeat("\t", rng.IntN(3)), id, randomWord(rng))
	}
	parts := []string{"", " ", "\t", "a", "b", "-", "+", "@@", "--- x", "+++ y", "\\", "```", "}"}
	var b strings.Builder
	for range rng.IntN(3) {
		b.WriteString(parts[rng.IntN(len(parts))])
	}
	return b.String()
}

func randomWord(rng *rand.Rand) string {
	words := []string{"x", "return nil", "if err != nil {", "}", "// note", "fmt.Println(x)"}
	return words[rng.IntN(len(words))]
}

// randomEdit inserts, deletes and replaces runs of lines, and sometimes
// adds or removes the final newline.
func randomEdit(rng *rand.Rand, old string, unique bool) string {
	lines := splitKeep(old)
	for k := range 1 + rng.IntN(4) {
		at := rng.IntN(len(lines) + 1)
		switch rng.IntN(3) {
		case 0: // insert
			var ins []string
			for j := range 1 + rng.IntN(3) {
				ins = append(ins, randomLine(rng, unique, fmt.Sprintf("n%d.%d", k, j))+"\n")
			}
			lines = append(lines[:at:at], append(ins, lines[at:]...)...)
		case 1: // delete
			end := min(len(lines), at+1+rng.IntN(3))
			lines = append(lines[:at:at], lines[end:]...)
		case 2: // replace
			if at < len(lines) {
				lines[at] = randomLine(rng, unique, fmt.Sprintf("r%d", k)) + "\n"
			}
		}
	}
	// Only the last line may lack its newline.
	for i := range lines {
		if i < len(lines)-1 && !strings.HasSuffix(lines[i], "\n") {
			lines[i] += "\n"
		}
	}
	if n := len(lines); n > 0 && rng.IntN(5) == 0 {
		if strings.HasSuffix(lines[n-1], "\n") {
			lines[n-1] = strings.TrimSuffix(lines[n-1], "\n")
		} else {
			lines[n-1] += "\n"
		}
	}
	return strings.Join(lines, "")
}

var headerNumsRe = regexp.MustCompile(`(?m)^@@ -\d+,(\d+) \+\d+,(\d+) @@$`)

// scramble gives every hunk wrong line numbers and counts, and shuffles
// the hunks.
func scramble(d string, rng *rand.Rand) string {
	d = headerNumsRe.ReplaceAllStringFunc(d, func(string) string {
		return fmt.Sprintf("@@ -%d,%d +%d,%d @@", 1+rng.IntN(200), rng.IntN(9), 1+rng.IntN(200), rng.IntN(9))
	})
	head, body, _ := strings.Cut(d, "\n@@")
	hunks := strings.Split("@@"+body, "\n@@")
	for i := range hunks {
		if i > 0 {
			hunks[i] = "@@" + hunks[i]
		}
	}
	rng.Shuffle(len(hunks), func(i, j int) { hunks[i], hunks[j] = hunks[j], hunks[i] })
	for i := range hunks {
		hunks[i] = strings.TrimSuffix(hunks[i], "\n")
	}
	return head + "\n" + strings.Join(hunks, "\n") + "\n"
}
