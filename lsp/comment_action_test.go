package lsp

import "testing"

func TestCommentInstruction(t *testing.T) {
	for line, want := range map[string]string{
		"\t// reika: add a timeout":          "add a timeout",
		"# Reika: retry twice":               "retry twice",
		"-- reika: use a prepared statement": "use a prepared statement",
		"/* reika: split this */":            "split this",
		"<!-- reika: add alt text -->":       "add alt text",
		"; reika: indent with two spaces":    "indent with two spaces",
		`x := "reika: not a comment"`:        "",
		"// reikaz: not ours":                "",
		"// see reika: not at the start":     "",
	} {
		m := commentInstruction.FindStringSubmatch(line)
		got := ""
		if m != nil {
			got = m[2]
		}
		if got != want {
			t.Errorf("%q → %q, want %q", line, got, want)
		}
	}
}
