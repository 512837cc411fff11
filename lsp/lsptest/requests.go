package lsptest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// OnApply queues answers for the next workspace/applyEdit requests, one
// each; with none queued the editor applies the edit (refusing it only if
// it does not fit the document, as a real editor would).
func (e *Editor) OnApply(answers ...ApplyAnswer) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.applyQ = append(e.applyQ, answers...)
}

// OnShowMessageRequest sets how the user answers window/showMessageRequest;
// by default they pick the first action.
func (e *Editor) OnShowMessageRequest(choose func(message string, actions []string) string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.choose = choose
}

// serveRequest answers one request of the server, and says in one line
// what the user saw and did.
func (e *Editor) serveRequest(m *message) (any, *RPCError, string) {
	c := e.cfg.Caps
	if slices.Contains(e.cfg.Ignore, m.Method) {
		return errNoAnswer, nil, m.Method + " → never answered"
	}
	switch m.Method {
	case "window/workDoneProgress/create":
		return e.onProgressCreate(m.Params)
	case "workspace/applyEdit":
		if !c.ApplyEdit {
			e.violation("workspace/applyEdit sent to a client without workspace.applyEdit")
		}
		return e.onApplyEdit(m.Params)
	case "window/showMessageRequest":
		return e.onShowMessageRequest(m.Params)
	case "window/showDocument":
		return e.onShowDocument(m.Params)
	case "workspace/configuration":
		var p struct {
			Items []json.RawMessage `json:"items"`
		}
		json.Unmarshal(m.Params, &p)
		return make([]any, len(p.Items)), nil, ""
	case "client/registerCapability", "client/unregisterCapability":
		return nil, nil, ""
	}
	return nil, &RPCError{Code: -32601, Message: "method not found: " + m.Method}, ""
}

// onProgressCreate keeps the token of window/workDoneProgress/create.
func (e *Editor) onProgressCreate(params json.RawMessage) (any, *RPCError, string) {
	var p struct {
		Token json.RawMessage `json:"token"`
	}
	json.Unmarshal(params, &p)
	if !e.cfg.Caps.Progress {
		e.violation("window/workDoneProgress/create sent to a client without window.workDoneProgress")
	}
	e.mu.Lock()
	e.tokens = append(e.tokens, strings.Trim(string(p.Token), `"`))
	e.mu.Unlock()
	return nil, nil, ""
}

// onShowMessageRequest answers window/showMessageRequest as the user
// would (OnShowMessageRequest; by default the first action).
func (e *Editor) onShowMessageRequest(params json.RawMessage) (any, *RPCError, string) {
	var p struct {
		Type    int    `json:"type"`
		Message string `json:"message"`
		Actions []struct {
			Title string `json:"title"`
		} `json:"actions"`
	}
	json.Unmarshal(params, &p)
	var titles []string
	for _, a := range p.Actions {
		titles = append(titles, a.Title)
	}
	e.mu.Lock()
	choose := e.choose
	e.mu.Unlock()
	pick := ""
	if choose != nil {
		pick = choose(p.Message, titles)
	} else if len(titles) > 0 {
		pick = titles[0]
	}
	line := fmt.Sprintf("showMessageRequest %s: %s %q → ", messageTypes[p.Type], p.Message, titles)
	if pick == "" {
		return nil, nil, line + "dismissed"
	}
	return map[string]string{"title": pick}, nil, line + strconv.Quote(pick)
}

// onShowDocument opens the document of window/showDocument and records
// it as shown.
func (e *Editor) onShowDocument(params json.RawMessage) (any, *RPCError, string) {
	var p struct {
		URI       string `json:"uri"`
		TakeFocus bool   `json:"takeFocus"`
		External  bool   `json:"external"`
	}
	json.Unmarshal(params, &p)
	if !e.cfg.Caps.ShowDocument {
		e.violation("window/showDocument sent to a client without window.showDocument.support")
	}
	line := fmt.Sprintf("showDocument %s takeFocus=%v", p.URI, p.TakeFocus)
	path, err := URIPath(p.URI)
	if err != nil {
		return map[string]bool{"success": false}, nil, line + " → failed: " + err.Error()
	}
	if err := e.open(path); err != nil {
		return map[string]bool{"success": false}, nil, line + " → failed: " + err.Error()
	}
	e.mu.Lock()
	e.shown = append(e.shown, path)
	e.mu.Unlock()
	return map[string]bool{"success": true}, nil, line
}

// onApplyEdit answers workspace/applyEdit: with the next queued
// ApplyAnswer, else by applying the edit to the buffers.
func (e *Editor) onApplyEdit(params json.RawMessage) (any, *RPCError, string) {
	var p struct {
		Label string          `json:"label"`
		Edit  json.RawMessage `json:"edit"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		e.violation("workspace/applyEdit params: %v", err)
		return nil, &RPCError{Code: -32602, Message: err.Error()}, ""
	}
	e.mu.Lock()
	var ans ApplyAnswer
	if len(e.applyQ) > 0 {
		ans, e.applyQ = e.applyQ[0], e.applyQ[1:]
	}
	e.mu.Unlock()
	line := fmt.Sprintf("applyEdit %q", p.Label)
	if ans.Before != nil {
		if err := ans.Before(e); err != nil {
			e.violation("the user's edit before answering applyEdit failed: %v", err)
		}
	}
	if ans.Ignore {
		return errNoAnswer, nil, line + " → never answered"
	}
	if ans.Refuse != "" {
		return map[string]any{"applied": false, "failureReason": ans.Refuse}, nil, line + " → refused by the user: " + ans.Refuse
	}
	e.mu.Lock()
	e.undoing = ans.Undo
	e.mu.Unlock()
	confirmed, err := e.ApplyWorkspaceEdit(p.Edit)
	e.mu.Lock()
	e.undoing = false
	e.mu.Unlock()
	if ans.Revert {
		e.revert()
		line += " (the user reverts the buffer)"
	}
	if ans.After != nil && err == nil {
		if aerr := ans.After(e); aerr != nil {
			e.violation("the user's edit after applying the edit failed: %v", aerr)
		}
	}
	if e.cfg.Caps.Eglot == "" {
		e.flushPending()
	}
	var stale *eglotStale
	if errors.As(err, &stale) {
		return nil, &RPCError{Code: -32603, Message: stale.Error()}, line + " → error: " + stale.Error()
	}
	if err == nil && e.cfg.SaveAll {
		for _, d := range e.Docs() {
			if werr := os.WriteFile(d.Path, []byte(d.Text), 0o644); werr != nil {
				e.violation("save %s: %v", d.Path, werr)
			}
		}
		line += " (saved)"
	}
	if len(confirmed) > 0 {
		line += fmt.Sprintf(" (the user confirmed %q)", confirmed)
	}
	if err != nil {
		return map[string]any{"applied": false, "failureReason": err.Error()}, nil, line + " → not applied: " + err.Error()
	}
	return map[string]any{"applied": true}, nil, line + " → applied"
}

// eglotStale is eglot's refusal of an edit for a version it has passed,
// answered as an error.
type eglotStale struct {
	name       string
	want, have int32
}

func (e *eglotStale) Error() string {
	return fmt.Sprintf("Edits on `%s' require version %d, you have %d", e.name, e.want, e.have)
}

// revert is the user reverting every open buffer that has unsent changes
// from disk: the changes are dropped, and the buffer closed and opened
// again.
func (e *Editor) revert() {
	e.mu.Lock()
	var paths []string
	for abs, d := range e.docs {
		if len(d.pending) > 0 {
			d.pending = nil
			paths = append(paths, abs)
		}
	}
	e.mu.Unlock()
	for _, abs := range paths {
		e.Close(abs)
		if err := e.open(abs); err != nil {
			e.violation("reopen %s: %v", abs, err)
		}
	}
}

// errNoAnswer, as a request's result, leaves the request unanswered.
var errNoAnswer = &struct{ noAnswer bool }{true}

// --- documents ---
