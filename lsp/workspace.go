package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/reika-lsp/reika/agent"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// editorSettings are the editor's settings from its two channels, raw
// until a session reads them: the startup options (initializationOptions)
// and the pushes (didChangeConfiguration), each push over the ones before.
// A push never gives a setting that widens trust (config.TrustKeys):
// editors fill it with workspace-level values a repository can carry.
type editorSettings struct {
	startup, pushed json.RawMessage
}

func (e editorSettings) setup(getenv func(string) string) agent.Setup {
	return agent.Setup{Settings: e.startup, Pushed: e.pushed, Getenv: getenv}
}

// same reports whether e and o are the same settings as the editor sent
// them (a push of nothing new leaves them the same).
func (e editorSettings) same(o editorSettings) bool {
	return bytes.Equal(e.startup, o.startup) && bytes.Equal(e.pushed, o.pushed)
}

// didChangeConfiguration takes the editor's settings: {"reika": {...}} or
// the settings themselves, over those of initializationOptions (eglot
// pushes {} on every connect, Helix its config at startup). A push that
// changes no effective setting does nothing. One that does ends the
// session, which the next need starts anew with them — after the run
// under way, which is never cancelled for it — and the user hears which
// values changed and when they apply. A session still starting takes
// them (session starts it again). A setting that widens trust is not
// taken from a push: the user is warned once per value.
func (s *Server) didChangeConfiguration(_ context.Context, req jsonrpc2.Request, _ jsonrpc2.Replier) (any, error) {
	// go.lsp.dev's DidChangeConfigurationParams decodes the settings into
	// maps; they stay raw here until the session reads them.
	var p struct {
		Settings json.RawMessage `json:"settings"`
	}
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	pushed, err := settingsObject(req.Method(), p.Settings)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	old := s.editor
	next := old
	next.pushed = overlay(old.pushed, pushed)
	s.editor = next
	// A session installed from now on has the new settings (session
	// checks); only the one in place now may be without them.
	cur := s.sess
	s.mu.Unlock()
	changed, ignored := s.settingsChanged(old, next)
	for _, ig := range ignored {
		if s.tellIgnored(ig.what) {
			s.showMessage(protocol.MessageTypeWarning, "Reika: %s", ig.notice)
		}
	}
	if len(changed) == 0 {
		s.logMessage(protocol.MessageTypeLog, "Reika: the editor's settings did not change")
		return nil, nil
	}
	what := "Reika: " + strings.Join(changed, ", ")
	switch {
	case cur == nil:
		// None yet, or one starting, which starts again with them.
		s.showMessage(protocol.MessageTypeInfo, "%s; the session starts with them", what)
	case s.runs.busy():
		// The run under way keeps its session; it ends with the run
		// (finishRun).
		s.showMessage(protocol.MessageTypeInfo, "%s; they apply from the next ask (a new session), the run under way goes on", what)
	default:
		s.showMessage(protocol.MessageTypeInfo, "%s; the next ask starts a new session with them", what)
		s.endSession("the settings changed")
	}
	return nil, nil
}

// endOutdated ends the session when the editor's settings now differ from
// those it started from in a value in force (a push during its run): the
// next need starts a new one with them.
func (s *Server) endOutdated() {
	s.mu.Lock()
	sess, now := s.sess, s.editor
	s.mu.Unlock()
	if sess == nil || sess.from.same(now) {
		return
	}
	if changed, _ := s.settingsChanged(sess.from, now); len(changed) > 0 {
		s.endSession("the settings changed")
	}
}

// ignoredValue is a trust-widening value of a push that was not taken:
// what (the key and the value) and the sentence the user reads.
type ignoredValue struct{ what, notice string }

// tellIgnored reports whether the user has not yet heard that this value
// of a push was ignored, and notes that they now have.
func (s *Server) tellIgnored(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ignoredTold[key] {
		return false
	}
	if s.ignoredTold == nil {
		s.ignoredTold = map[string]bool{}
	}
	s.ignoredTold[key] = true
	return true
}

// settingsChanged lists the effective settings that differ between two
// sets of editor settings, as `context_window 16384 → 32768`, and the
// trust-widening values next holds that are not taken.
func (s *Server) settingsChanged(old, next editorSettings) (changed []string, ignored []ignoredValue) {
	before, _, err1 := old.setup(s.opts.Getenv).Resolve()
	after, _, err2 := next.setup(s.opts.Getenv).Resolve()
	if err1 != nil || err2 != nil {
		// A config file that does not parse: the next session says why.
		return []string{"the settings changed"}, nil
	}
	for _, ig := range after.Ignored {
		b, _ := json.Marshal(ig.Value)
		ignored = append(ignored, ignoredValue{ig.Key + "=" + string(b), ig.Notice()})
	}
	return before.Changes(after), ignored
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

// settingsObject checks that the editor's settings are an object (or
// absent).
func settingsObject(method string, raw json.RawMessage) (json.RawMessage, error) {
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
