package tools

import (
	"strings"
	"testing"
)

const goFile = `package main

import "fmt"

func main() {
	fmt.Println("hello")
}

func other() {
	fmt.Println("hello")
}
`

// applyText parses a diff and applies its one file to text.
func applyText(text, d string) (string, error) {
	files, err := parseDiff(d)
	if err != nil {
		return "", err
	}
	return applyHunks(text, files[0].hunks, "f.go")
}

func TestApplyDiff(t *testing.T) {
	want := strings.Replace(goFile, `func main() {
	fmt.Println("hello")`, `func main() {
	fmt.Println("hello, world")`, 1)
	tests := []struct {
		name string
		diff string
		want string
		err  string // in the error, when set
	}{
		{name: "exact", want: want, diff: `--- a/f.go
+++ b/f.go
@@ -5,3 +5,3 @@
 func main() {
-	fmt.Println("hello")
+	fmt.Println("hello, world")
 }
`},
		{name: "wrong line numbers and counts", want: want, diff: `--- a/f.go
+++ b/f.go
@@ -40,9 +41,2 @@
 func main() {
-	fmt.Println("hello")
+	fmt.Println("hello, world")
 }
`},
		{name: "fenced, with prose around it", want: want, diff: "Here is the change you asked for:\n\n```diff\n--- f.go\n+++ f.go\n@@ -5,3 +5,3 @@\n func main() {\n-\tfmt.Println(\"hello\")\n+\tfmt.Println(\"hello, world\")\n }\n```\n\nThis makes main greet the world.\n"},
		{name: "prose after an unfenced diff", want: want, diff: "@@ -5,3 +5,3 @@\n func main() {\n-\tfmt.Println(\"hello\")\n+\tfmt.Println(\"hello, world\")\n }\n\nThat is all.\n"},
		{name: "bare hunk without numbers", want: want, diff: "@@ @@\n func main() {\n-\tfmt.Println(\"hello\")\n+\tfmt.Println(\"hello, world\")\n"},
		{name: "header without spaces", want: want, diff: "--- a/f.go\n+++ b/f.go\n@@-5,3 +5,3@@\n func main() {\n-\tfmt.Println(\"hello\")\n+\tfmt.Println(\"hello, world\")\n }\n"},
		{name: "the line number chooses between equal places", diff: "@@ -10,2 +10,2 @@\n-\tfmt.Println(\"hello\")\n+\tfmt.Println(\"bye\")\n }\n",
			want: strings.Replace(goFile, "func other() {\n\tfmt.Println(\"hello\")", "func other() {\n\tfmt.Println(\"bye\")", 1)},
		{name: "equal places and no numbers", diff: "@@ @@\n-\tfmt.Println(\"hello\")\n+\tfmt.Println(\"bye\")\n", err: "fits 2 places (lines 6, 10)"},
		{name: "trailing whitespace tolerated", want: want, diff: "@@ -5,3 +5,3 @@\n func main() {   \n-\tfmt.Println(\"hello\")  \n+\tfmt.Println(\"hello, world\")\n }\n"},
		{name: "blank context line without its space", diff: "@@ -2,3 +2,3 @@\n\n-import \"fmt\"\n+import \"os\"\n\n",
			want: strings.Replace(goFile, `import "fmt"`, `import "os"`, 1)},
		{name: "git diff with extended headers", want: want, diff: "diff --git a/f.go b/f.go\nindex 83db48f..bf269f4 100644\n--- a/f.go\n+++ b/f.go\n@@ -5,3 +5,3 @@ func main() {\n func main() {\n-\tfmt.Println(\"hello\")\n+\tfmt.Println(\"hello, world\")\n }\n"},
		{name: "two hunks, given in the wrong order", diff: "@@ -9,2 +9,2 @@\n-func other() {\n+func other2() {\n \tfmt.Println(\"hello\")\n@@ -1,1 +1,1 @@\n-package main\n+package demo\n",
			want: strings.Replace(strings.Replace(goFile, "func other()", "func other2()", 1), "package main", "package demo", 1)},
		{name: "a hunk that cannot be placed", diff: "@@ -5,3 +5,3 @@\n func main() {\n-\tfmt.Println(\"goodbye\")\n+\tfmt.Println(\"hello, world\")\n }\n",
			err: `hunk 1 of 1 (@@ -5,3 +5,3 @@) cannot be placed: its old lines match from line 5 for 1 line, but then it expects "\tfmt.Println(\"goodbye\")" where line 6 is "\tfmt.Println(\"hello\")" in f.go; nothing was applied`},
		{name: "one bad hunk of two applies nothing", diff: "@@ -1 +1 @@\n-package main\n+package demo\n@@ -9 +9 @@\n-func othr() {\n+func other2() {\n",
			err: `hunk 2 of 2 (@@ -9 +9 @@) cannot be placed: its first old line "func othr() {" is not in the file (the closest is line 9: "func other() {")`},
		{name: "no hunks", diff: "--- a/f.go\n+++ b/f.go\n", err: "the diff has no hunks"},
		{name: "prose only", diff: "I would change the greeting.", err: "the diff has no hunks"},
		{name: "empty hunk", diff: "@@ -1 +1 @@\n", err: "has no lines"},
		{name: "pure insertion without context", diff: "@@ @@\n+// added\n", err: "only adds lines"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := applyText(goFile, tt.diff)
			switch {
			case tt.err != "":
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("apply = %v, want an error containing %q", err, tt.err)
				}
			case err != nil:
				t.Errorf("apply = %v, want no error", err)
			case got != tt.want:
				t.Errorf("apply =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestApplyDiffLineEnds(t *testing.T) {
	tests := []struct {
		name, old, diff, want string
	}{
		{"CRLF file keeps CRLF", "a\r\nb\r\nc\r\n", "@@ -2 +2,2 @@\n-b\n+B\n+B2\n", "a\r\nB\r\nB2\r\nc\r\n"},
		{"no newline at the end is kept", "a\nb", "@@ -2 +2 @@\n-b\n+c\n", "a\nc"},
		{"adding after a last line without newline", "a\nb", "@@ -2 +2,2 @@\n b\n+c\n", "a\nb\nc"},
		{"marker removes the newline", "a\nb\n", "@@ -2 +2 @@\n-b\n+b\n\\ No newline at end of file\n", "a\nb"},
		{"marker adds the newline", "a\nb", "@@ -2 +2 @@\n-b\n\\ No newline at end of file\n+b\n", "a\nb\n"},
		{"insertion at a line number in an unchanged region", "a\nb\n", "@@ -1,0 +2 @@\n+x\n", "a\nx\nb\n"},
		{"insertion into an empty file", "", "@@ -0,0 +1,2 @@\n+x\n+y\n", "x\ny\n"},
		{"deleting the last lines", "a\nb\nc", "@@ -2,2 +1,0 @@\n-b\n-c\n", "a\n"},
	}
	for _, tt := range tests {
		got, err := applyText(tt.old, tt.diff)
		if err != nil || got != tt.want {
			t.Errorf("%s: apply(%q, %q) = %q, %v; want %q", tt.name, tt.old, tt.diff, got, err, tt.want)
		}
	}
}

func TestPickFile(t *testing.T) {
	d := "--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-x\n+X\n--- a/pkg/y.go\n+++ b/pkg/y.go\n@@ -1 +1 @@\n-y\n+Y\n"
	files, err := parseDiff(d)
	if err != nil || len(files) != 2 {
		t.Fatalf("parseDiff(two files) = %d files, %v", len(files), err)
	}
	f, others, err := pickFile(files, "pkg/y.go", "/w/pkg/y.go")
	if err != nil || f.newName != "b/pkg/y.go" || len(others) != 1 || others[0] != "x.go" {
		t.Errorf("pickFile(pkg/y.go) = %q, %v, %v; want y.go's part and x.go reported", f.newName, others, err)
	}
	if f, _, err := pickFile(files, "y.go", "/w/y.go"); err != nil || f.newName != "b/pkg/y.go" {
		t.Errorf("pickFile(y.go) = %q, %v; want the part that ends with y.go", f.newName, err)
	}
	if _, _, err := pickFile(files, "z.go", "/w/z.go"); err == nil || !strings.Contains(err.Error(), "none of them is z.go") {
		t.Errorf("pickFile(z.go) = %v, want an error saying none matches", err)
	}
	// A hunk whose body holds lines that look like a file header, which
	// its counts say belong to it.
	d = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n--- x\n+++ y\n@@ -5 +5 @@\n-a\n+b\n"
	files, err = parseDiff(d)
	if err != nil || len(files) != 1 || len(files[0].hunks) != 2 || len(files[0].hunks[0].lines) != 2 {
		t.Errorf("parseDiff(header-like body) = %+v, %v; want one file, two hunks, the first with two lines", files, err)
	}
}
