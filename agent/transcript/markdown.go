package transcript

import (
	"fmt"
	"strings"
)

// Markdown renders a transcript for reading: every message, note and
// event in order, tool calls with their arguments and results in fenced
// blocks. Nothing is left out — it is the whole conversation, whatever the
// requests to the engine kept of it.
func Markdown(recs []Record) string {
	var b strings.Builder
	for _, r := range recs {
		switch r.Kind {
		case KindMeta:
			if m := r.Meta; m != nil {
				fmt.Fprintf(&b, "# Reika session %s\n\n", m.ID)
				if m.Workspace != "" {
					fmt.Fprintf(&b, "- workspace: `%s`\n", m.Workspace)
				}
				if m.Model != "" {
					fmt.Fprintf(&b, "- model: `%s` at %s\n", m.Model, m.Endpoint)
				}
				if m.Window > 0 {
					fmt.Fprintf(&b, "- window: %d tokens\n", m.Window)
				}
				fmt.Fprintf(&b, "- started: %s\n\n", r.At.Format("2006-01-02 15:04:05 UTC"))
			}
		case KindMessage:
			writeMessage(&b, r)
		case KindNote:
			fmt.Fprintf(&b, "> **Note before a fold** (%s)\n>\n%s\n\n", r.At.Format("15:04:05"), quote(r.Text))
		case KindEvent:
			fmt.Fprintf(&b, "*%s — %s*\n\n", r.At.Format("15:04:05"), r.Text)
		case KindRecapEdit:
			fmt.Fprintf(&b, "> **The user edited the recap** (%s)\n>\n%s\n\n", r.At.Format("15:04:05"), quote(r.Text))
		}
	}
	return b.String()
}

func writeMessage(b *strings.Builder, r Record) {
	m := r.Message
	if m == nil {
		return
	}
	switch m.Role {
	case "user":
		fmt.Fprintf(b, "## You (%s)\n\n%s\n\n", r.At.Format("15:04:05"), m.Content)
	case "assistant":
		fmt.Fprintf(b, "## Reika (%s)\n\n", r.At.Format("15:04:05"))
		if m.Reasoning != "" {
			fmt.Fprintf(b, "<details><summary>reasoning</summary>\n\n%s\n\n</details>\n\n", m.Reasoning)
		}
		if m.Content != "" {
			fmt.Fprintf(b, "%s\n\n", m.Content)
		}
		for _, c := range m.ToolCalls {
			fmt.Fprintf(b, "**%s** `%s`\n\n", c.Name, c.Arguments)
		}
	case "tool":
		what := m.Payload.Path
		if what == "" {
			what = m.ToolCallID
		}
		fmt.Fprintf(b, "<details><summary>result: %s (%d bytes)</summary>\n\n%s\n\n</details>\n\n", what, len(m.Content), fence(m.Content))
	}
}

// fence puts text in a code block whose fence its own backquotes cannot
// close.
func fence(text string) string {
	f := "```"
	for strings.Contains(text, f) {
		f += "`"
	}
	return f + "\n" + strings.TrimRight(text, "\n") + "\n" + f
}

func quote(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "> " + l
	}
	return strings.Join(lines, "\n")
}
