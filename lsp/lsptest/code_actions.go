package lsptest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Diagnostic is a problem the editor reports with a code action request.
type Diagnostic struct {
	Range    Range  `json:"range"`
	Severity int    `json:"severity,omitempty"`
	Source   string `json:"source,omitempty"`
	Message  string `json:"message"`
}

// Command is an LSP command.
type Command struct {
	Title     string            `json:"title"`
	Command   string            `json:"command"`
	Arguments []json.RawMessage `json:"arguments,omitempty"`
}

// CodeAction is a code action or a bare command, as the server offered it.
type CodeAction struct {
	Title       string          `json:"title"`
	Kind        string          `json:"kind,omitempty"`
	IsPreferred bool            `json:"isPreferred,omitempty"`
	Edit        json.RawMessage `json:"edit,omitempty"`
	Command     *Command        `json:"command,omitempty"`
}

// CodeActions asks for the code actions on a range of an open document.
func (e *Editor) CodeActions(path string, rng Range, diags ...Diagnostic) []CodeAction {
	e.t.Helper()
	if diags == nil {
		diags = []Diagnostic{}
	}
	var raw []json.RawMessage
	if _, err := e.Call("textDocument/codeAction", map[string]any{
		"textDocument": map[string]any{"uri": e.URI(path)},
		"range":        rng,
		"context":      map[string]any{"diagnostics": diags, "triggerKind": 1},
	}, &raw); err != nil {
		e.t.Fatalf("textDocument/codeAction: %v", err)
	}
	var out []CodeAction
	for _, r := range raw {
		var probe struct {
			Command json.RawMessage `json:"command"`
		}
		json.Unmarshal(r, &probe)
		if len(probe.Command) > 0 && probe.Command[0] == '"' {
			// A bare Command.
			var c Command
			if err := json.Unmarshal(r, &c); err != nil {
				e.t.Fatalf("code action %s: %v", r, err)
			}
			out = append(out, CodeAction{Title: c.Title, Command: &c})
			continue
		}
		if !e.cfg.Caps.CodeActionLiteral {
			e.violation("a CodeAction literal sent to a client without codeActionLiteralSupport: %s", r)
		}
		var ca CodeAction
		if err := json.Unmarshal(r, &ca); err != nil {
			e.t.Fatalf("code action %s: %v", r, err)
		}
		out = append(out, ca)
	}
	return out
}

// PickAction returns the first action whose title contains sub; it fails
// the test, listing the titles, when there is none.
func (e *Editor) PickAction(actions []CodeAction, sub string) CodeAction {
	e.t.Helper()
	var titles []string
	for _, a := range actions {
		if strings.Contains(a.Title, sub) {
			return a
		}
		titles = append(titles, a.Title)
	}
	e.t.Fatalf("no code action titled %q among %q", sub, titles)
	return CodeAction{}
}

// RunAction does what an editor does when the user picks a code action:
// apply its edit, then execute its command. It returns the command's
// result (an edit that does not apply is an error, and the command is
// then not run).
func (e *Editor) RunAction(ca CodeAction) (*Pending, error) {
	e.t.Helper()
	if len(ca.Edit) > 0 {
		if _, err := e.ApplyWorkspaceEdit(ca.Edit); err != nil {
			return nil, fmt.Errorf("the edit of %q: %w", ca.Title, err)
		}
	}
	if ca.Command == nil {
		return nil, nil
	}
	args := make([]any, len(ca.Command.Arguments))
	for i, a := range ca.Command.Arguments {
		args[i] = a
	}
	return e.ExecAsync(ca.Command.Command, args...), nil
}

// --- helpers ---
