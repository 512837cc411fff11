package lsp

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent/tools"
)

// askUser puts one of the agent's questions to the user with
// window/showMessageRequest: what would happen, why it asks, and the
// answers the question allows, "Deny" last. No answer (the user closed
// the prompt, the client gave up) is a no.
func (s *Server) askUser(ctx context.Context, q tools.Question) tools.Answer {
	titles := map[string]tools.Answer{}
	var actions []string
	for _, a := range q.Answers {
		t := answerTitle(q, a)
		titles[t] = a
		actions = append(actions, t)
	}
	const deny = "Deny"
	actions = append(actions, deny)
	picked := s.ask(ctx, protocol.MessageTypeWarning, questionText(q), actions...)
	if a, ok := titles[picked]; ok {
		return a
	}
	return tools.Deny
}

// answerTitle is the button of an answer.
func answerTitle(q tools.Question, a tools.Answer) string {
	switch a {
	case tools.Once:
		if q.Kind == tools.AskProtected || q.Kind == tools.AskEdit {
			return "Apply this change"
		}
		if q.Kind == tools.AskLeft {
			return "Keep it"
		}
		return "Allow once"
	case tools.ThisRun:
		if q.Kind == tools.AskFetch {
			host := q.Subject
			if u, err := url.Parse(q.Subject); err == nil {
				host = u.Hostname()
			}
			return "Allow " + host + " for this session"
		}
		return "Allow for this run"
	case tools.Always:
		return "Always allow (user config)"
	}
	return string(a)
}

// questionText is the question's message: a first line that says what it
// asks and, in a few words, why (the title a client shows), then the
// command or URL whole, never cut, what would hide text made visible
// (tools.Visible), then why in full; for a change, the change itself
// (its head: a prompt is no place for a long diff).
func questionText(q tools.Question) string {
	label := q.Label
	if label != "" {
		label = " (" + label + ")"
	}
	switch q.Kind {
	case tools.AskProtected:
		return fmt.Sprintf("Reika asks (protected): change %s?\nWhy: %s\nThe change:\n%s", tools.Visible(q.Subject), q.Why, diffPreview(q.Detail, 30, 3000))
	case tools.AskEdit:
		return fmt.Sprintf("Reika asks%s: change %s?\nWhy: %s\nThe change:\n%s", label, tools.Visible(q.Subject), q.Why, diffPreview(q.Detail, 30, 3000))
	case tools.AskLeft:
		return fmt.Sprintf("Reika asks (protected): keep %s, which a command left?\nWhy: %s\nWhat it is:\n%s", tools.Visible(q.Subject), q.Why, diffPreview(q.Detail, 30, 3000))
	case tools.AskFetch:
		return fmt.Sprintf("Reika asks%s: fetch this URL?\n%s\nWhy: %s", label, tools.Visible(q.Subject), q.Why)
	case tools.AskMCP:
		return fmt.Sprintf("Reika asks%s: call the MCP tool %s with these arguments?\n%s\nWhy: %s", label, tools.Visible(q.Subject), tools.Visible(q.Detail), q.Why)
	}
	return fmt.Sprintf("Reika asks%s: run this command?\n%s\nWhy: %s", label, tools.Visible(q.Subject), q.Why)
}

// diffPreview is the head of diff d that a question shows: its first
// lines, within n lines and max bytes, then "… k more lines". It keeps
// whole lines, so it is no clip.
func diffPreview(d string, n, max int) string {
	lines := strings.Split(strings.TrimRight(d, "\n"), "\n")
	var b strings.Builder
	for i, l := range lines {
		if i == n || b.Len()+len(l) > max {
			fmt.Fprintf(&b, "… %d more lines", len(lines)-i)
			break
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

// confirmChange gets the user's yes to a proposal that needs one: a
// protected path, or any change in a run that asks before every edit. A
// client whose workspace edits ask (change annotations that need
// confirmation, which buildEdit sets for exactly these changes: VS Code's
// refactor preview, where nothing is pre-ticked) asks there, with the change in front of the user; another is asked with
// a message request; one that can do neither gets a refusal the model and
// the user read. It returns "" to go on, else the outcome and the end
// line's short reason.
func (s *Server) confirmChange(ctx context.Context, p tools.Proposal) (*tools.Outcome, string) {
	why := p.Protected
	if why == "" {
		if tools.RunMode(ctx) != tools.AskAll {
			return nil, ""
		}
		why = "this ask applies nothing unasked"
	}
	c := s.caps()
	if c.applyEdit && c.annotations && c.documentChanges {
		return nil, ""
	}
	if !c.messageActions {
		s.showMessage(protocol.MessageTypeWarning, "Reika did not change %s: %s, and this editor cannot ask you. Ask Reika to show the change, and make it yourself if you want it", p.Path, why)
		return &tools.Outcome{Reason: fmt.Sprintf("%s, and this editor cannot ask the user; show the user the change and let them make it", why)}, "protected, the editor cannot ask"
	}
	kind := tools.AskProtected
	if p.Protected == "" {
		kind = tools.AskEdit
	}
	q := tools.Question{Kind: kind, Subject: p.Path, Why: why, Detail: p.Diff, Answers: []tools.Answer{tools.Once}}
	if s.askUser(ctx, q) != tools.Once {
		return &tools.Outcome{Reason: fmt.Sprintf("the user declined the change to %s (%s); do not propose it again unless the user asks", p.Path, why)}, "declined"
	}
	return nil, ""
}
