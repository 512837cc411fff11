package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/agent/transcript"
	"github.com/reika-lsp/reika/contextwin"
)

// A tool call is recorded before it runs (the reply that makes it) and
// its result after it, each synced: after a crash the transcript tells
// the calls that ran from those that did not finish. The latter are never
// run again on the model's behalf: a resume gives each a result that says
// it was interrupted, so that the model checks before it repeats it.

// interruptedText is the result a resume gives a call whose result the
// transcript lacks.
const interruptedText = "interrupted: the server stopped before this call finished; it may or may not have run."

// unfinishedCalls are the calls of the transcript's last reply that have no
// result: the server stopped while they ran, or before they did. A
// reply followed by another message has none.
func unfinishedCalls(recs []transcript.Record) []transcript.ToolCall {
	var pending []transcript.ToolCall
	for _, r := range recs {
		if r.Kind != transcript.KindMessage || r.Message == nil {
			continue
		}
		m := r.Message
		switch {
		case m.Role == string(contextwin.Tool):
			for i, c := range pending {
				if c.ID == m.ToolCallID {
					pending = append(pending[:i:i], pending[i+1:]...)
					break
				}
			}
		case m.Role == string(contextwin.Assistant):
			pending = append([]transcript.ToolCall(nil), m.ToolCalls...)
		default:
			pending = nil
		}
	}
	return pending
}

// closeInterrupted gives each unfinished call of a resumed transcript its
// result, recorded, and returns the line that tells the user; "" when
// there were none.
func (s *Session) closeInterrupted(calls []transcript.ToolCall) string {
	if len(calls) == 0 {
		return ""
	}
	var names []string
	for _, c := range calls {
		text := interruptedText
		path := argPath(c.Arguments)
		if (c.Name == tools.EditTool || c.Name == tools.WriteTool) && path != "" {
			text += fmt.Sprintf(" Read %s to see whether the change is in it before you edit it again.", path)
		} else if c.Name == tools.EditTool || c.Name == tools.WriteTool {
			text += " Read the file to see whether the change is in it before you edit it again."
		}
		s.record(contextwin.Message{Role: contextwin.Tool, ToolCallID: c.ID, Content: text}, "")
		names = append(names, clipWithEllipsis(strings.TrimSpace(c.Name+" "+path), 60))
	}
	s.sync()
	return fmt.Sprintf("%d tool call%s had not finished when the server stopped (%s): not run again; the model is told it may or may not have run",
		len(calls), pluralSuffix(len(calls)), strings.Join(names, ", "))
}

// argPath is the "path" argument of a call, "" when it has none.
func argPath(args string) string {
	var a struct {
		Path string `json:"path"`
	}
	json.Unmarshal([]byte(args), &a)
	return a.Path
}

// skippedLine tells the user what a resume skipped of the transcript; ""
// when it skipped nothing. A last line cut short is all a crash may cost,
// and is not a warning.
func skippedLine(path string, skipped []transcript.Skip) (text string, warning bool) {
	if len(skipped) == 0 {
		return "", false
	}
	var said []string
	for _, s := range skipped {
		warning = warning || !s.Cut
		said = append(said, s.String())
	}
	if len(said) > 5 {
		said = append(said[:5], fmt.Sprintf("and %d more", len(said)-5))
	}
	return fmt.Sprintf("the transcript %s: %d line%s skipped (%s); the session resumes from the rest",
		path, len(skipped), pluralSuffix(len(skipped)), strings.Join(said, "; ")), warning
}
