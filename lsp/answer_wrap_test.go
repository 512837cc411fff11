package lsp

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWrapMarkdown(t *testing.T) {
	long := strings.TrimSpace(strings.Repeat("Greet joins the literal with the name. ", 5))
	kept := func(s string) []string { return []string{s} }
	for _, tt := range []struct {
		name, in string
		cont     string   // what each line after the first begins with, when wrapped
		want     []string // else the lines out
	}{
		{name: "short lines stay", in: "a b\n\n- c", want: []string{"a b", "", "- c"}},
		{name: "prose", in: long, cont: ""},
		{name: "a list item's next lines take its indent", in: "- " + long, cont: "  "},
		{name: "a numbered item's", in: "12. " + long, cont: "    "},
		{name: "a quote's", in: "> " + long, cont: "> "},
		{name: "fenced code stays", in: "```\n" + long + "\n```", want: []string{"```", long, "```"}},
		{name: "indented code stays", in: "    " + long, want: kept("    " + long)},
		{name: "a table stays", in: "| " + long + " |", want: kept("| " + long + " |")},
		{name: "a heading stays", in: "## " + long, want: kept("## " + long)},
		{name: "a word longer than the width stays whole", in: strings.Repeat("x", 100), want: kept(strings.Repeat("x", 100))},
	} {
		lines := strings.Split(wrapMarkdown(tt.in, 40), "\n")
		if tt.want != nil {
			if strings.Join(lines, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("%s: wrapMarkdown = %q, want %q", tt.name, lines, tt.want)
			}
			continue
		}
		if len(lines) < 2 {
			t.Errorf("%s: wrapMarkdown = %q, want it wrapped", tt.name, lines)
		}
		joined := lines[0]
		for i, l := range lines {
			if n := utf8.RuneCountInString(l); n > 40 {
				t.Errorf("%s: line %d has %d characters: %q", tt.name, i+1, n, l)
			}
			if i == 0 {
				continue
			}
			if !strings.HasPrefix(l, tt.cont) || strings.HasPrefix(l, tt.cont+" ") {
				t.Errorf("%s: line %d %q does not begin with %q", tt.name, i+1, l, tt.cont)
			}
			joined += " " + strings.TrimPrefix(l, tt.cont)
		}
		if joined != tt.in {
			t.Errorf("%s: wrapMarkdown's lines join to %q, want %q", tt.name, joined, tt.in)
		}
	}
}
