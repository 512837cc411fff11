package lsp

import (
	"strings"
	"unicode/utf8"
)

// answerWidth is the width the answer document's prose is wrapped at: an
// editor that does not wrap long lines (Helix, which opens the document
// in a split beside the code: some 52 columns on a 120-column terminal)
// shows it whole.
const answerWidth = 50

// wrapMarkdown wraps the lines of a Markdown text longer than width at
// spaces, where a line break changes nothing in the rendered text: prose,
// list items and quotes (a continuation line takes the indent of the
// item's text, or the quote's marker). Fenced and indented code, tables,
// headings and a word longer than width are left as they are.
func wrapMarkdown(text string, width int) string {
	var b strings.Builder
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		trimmed := strings.TrimLeft(line, " ")
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fenced = !fenced
		}
		if fenced || utf8.RuneCountInString(line) <= width || strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t") ||
			strings.HasPrefix(trimmed, "|") || strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			b.WriteString(line)
			continue
		}
		b.WriteString(wrapLine(line, continuation(line), width))
	}
	return b.String()
}

// continuation is what a wrapped line's next lines begin with: spaces up
// to the text of a list item, the marker of a quote, else the line's own
// indent.
func continuation(line string) string {
	indent := len(line) - len(strings.TrimLeft(line, " "))
	rest := line[indent:]
	switch {
	case strings.HasPrefix(rest, "> "):
		return line[:indent] + "> "
	case strings.HasPrefix(rest, "- "), strings.HasPrefix(rest, "* "), strings.HasPrefix(rest, "+ "):
		return strings.Repeat(" ", indent+2)
	}
	if n := strings.IndexAny(rest, ".)"); n > 0 && n < 4 && strings.Trim(rest[:n], "0123456789") == "" && strings.HasPrefix(rest[n+1:], " ") {
		return strings.Repeat(" ", indent+n+2)
	}
	return line[:indent]
}

// wrapLine breaks line at spaces into lines of at most width characters
// where it can, each after the first beginning with cont.
func wrapLine(line, cont string, width int) string {
	var b strings.Builder
	cur, n := "", 0
	for _, w := range strings.Split(line, " ") {
		switch {
		case cur == "" && n == 0:
			cur, n = w, utf8.RuneCountInString(w)
		case n+1+utf8.RuneCountInString(w) <= width || strings.TrimSpace(cur) == "" || strings.TrimSpace(w) == "":
			cur += " " + w
			n += 1 + utf8.RuneCountInString(w)
		default:
			b.WriteString(cur)
			b.WriteByte('\n')
			cur, n = cont+w, utf8.RuneCountInString(cont+w)
		}
	}
	b.WriteString(cur)
	return b.String()
}
