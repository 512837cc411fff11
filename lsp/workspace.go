package lsp

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/reika-lsp/reika/agent"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// didChangeConfiguration takes the editor's settings: {"reika": {...}} or
// the settings themselves, over those of initializationOptions (eglot
// pushes {} on every connect, Helix its config at startup). A push that
// changes no effective setting does nothing. One that does ends the
// session, which the next need starts anew with them — after the run
// under way, which is never cancelled for it — and the user hears which
// values changed.
func (s *Server) didChangeConfiguration(_ context.Context, req jsonrpc2.Request, _ jsonrpc2.Replier) (any, error) {
	// go.lsp.dev's DidChangeConfigurationParams decodes the settings into
	// maps; they stay raw here until the session reads them.
	var p struct {
		Settings json.RawMessage `json:"settings"`
	}
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	pushed, err := editorSettings(req.Method(), p.Settings)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	old := s.editor
	next := overlay(old, pushed)
	s.editor = next
	s.mu.Unlock()
	changed := s.settingsChanged(old, next)
	if len(changed) == 0 {
		s.logMessage(protocol.MessageTypeLog, "Reika: the editor's settings did not change")
		return nil, nil
	}
	what := "Reika: " + strings.Join(changed, ", ")
	if s.runs.busy() {
		s.mu.Lock()
		s.stale = true
		s.mu.Unlock()
		s.showMessage(protocol.MessageTypeInfo, "%s; they apply from the next ask (a new session), the run under way goes on", what)
		return nil, nil
	}
	s.showMessage(protocol.MessageTypeInfo, "%s; the next ask starts a new session with them", what)
	s.endSession("the settings changed")
	return nil, nil
}

// settingsChanged lists the effective settings that differ between two
// sets of editor settings, as `context_window 16384 → 32768`.
func (s *Server) settingsChanged(old, next json.RawMessage) []string {
	before, _, err1 := agent.Setup{Settings: old, Getenv: s.opts.Getenv}.Resolve()
	after, _, err2 := agent.Setup{Settings: next, Getenv: s.opts.Getenv}.Resolve()
	if err1 != nil || err2 != nil {
		// A config file that does not parse: the next session says why.
		return []string{"the settings changed"}
	}
	return before.Changes(after)
}

// overlay puts the keys of a settings push over those the editor sent
// before; either may nest them in a "reika" section.
func overlay(base, top json.RawMessage) json.RawMessage {
	b, t := section(base), section(top)
	if len(t) == 0 {
		return base
	}
	if b == nil {
		b = map[string]any{}
	}
	for k, v := range t {
		b[k] = v
	}
	out, err := json.Marshal(b)
	if err != nil {
		return top
	}
	return out
}

// section reads settings as an object, the "reika" section when there is
// one.
func section(raw json.RawMessage) map[string]any {
	var m map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return nil
	}
	if inner, ok := m["reika"].(map[string]any); ok {
		return inner
	}
	return m
}

func editorSettings(method string, raw json.RawMessage) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &fields); err != nil {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: the settings are not an object: %v", method, err)
		}
	}
	return raw, nil
}

func (s *Server) didChangeWorkspaceFolders(_ context.Context, req jsonrpc2.Request, _ jsonrpc2.Replier) (any, error) {
	var p protocol.DidChangeWorkspaceFoldersParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	s.folders.change(folderPaths(p.Event.Added), folderPaths(p.Event.Removed))
	s.resetSession("the workspace folders changed")
	return nil, nil
}

// folderPaths are the paths of the workspace folders that are local
// files; the others are left out.
func folderPaths(fs []protocol.WorkspaceFolder) []string {
	var paths []string
	for _, f := range fs {
		if path, err := URIToPath(protocol.DocumentURI(f.URI)); err == nil {
			paths = append(paths, path)
		}
	}
	return paths
}
