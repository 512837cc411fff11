package lsp

import (
	"context"
	"encoding/json"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// didChangeConfiguration takes the editor's settings: {"reika": {...}} or
// the settings themselves. A change to how the engine is reached starts a
// new session on the next ask.
func (s *Server) didChangeConfiguration(_ context.Context, req jsonrpc2.Request, _ jsonrpc2.Replier) (any, error) {
	// go.lsp.dev's DidChangeConfigurationParams decodes the settings into
	// maps; they stay raw here until the session reads them.
	var p struct {
		Settings json.RawMessage `json:"settings"`
	}
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	settings, err := editorSettings(req.Method(), p.Settings)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.editor = settings
	s.mu.Unlock()
	s.resetSession("the settings changed")
	return nil, nil
}

// editorSettings checks that the editor's settings are an object (or
// null, or absent), and keeps them as they came.
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
