package lsp

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// version is reported in initialize's serverInfo.
const version = "0.1.0"

// initializeParams is the part of initialize's params the server reads.
// go.lsp.dev models LSP 3.15–3.16; the position encodings (3.17) and a few
// capabilities it lacks are read here directly.
type initializeParams struct {
	ClientInfo *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"clientInfo"`
	RootURI               protocol.DocumentURI       `json:"rootUri"`
	RootPath              string                     `json:"rootPath"`
	WorkspaceFolders      []protocol.WorkspaceFolder `json:"workspaceFolders"`
	InitializationOptions map[string]any             `json:"initializationOptions"`
	Capabilities          struct {
		General struct {
			PositionEncodings []string `json:"positionEncodings"`
		} `json:"general"`
		Window struct {
			WorkDoneProgress bool `json:"workDoneProgress"`
			ShowDocument     struct {
				Support bool `json:"support"`
			} `json:"showDocument"`
			ShowMessage *struct {
				MessageActionItem *json.RawMessage `json:"messageActionItem"`
			} `json:"showMessage"`
		} `json:"window"`
		Workspace struct {
			ApplyEdit     bool `json:"applyEdit"`
			WorkspaceEdit struct {
				DocumentChanges         bool            `json:"documentChanges"`
				ResourceOperations      []string        `json:"resourceOperations"`
				ChangeAnnotationSupport json.RawMessage `json:"changeAnnotationSupport"`
			} `json:"workspaceEdit"`
		} `json:"workspace"`
		TextDocument struct {
			CodeAction struct {
				CodeActionLiteralSupport json.RawMessage `json:"codeActionLiteralSupport"`
				ResolveSupport           json.RawMessage `json:"resolveSupport"`
			} `json:"codeAction"`
		} `json:"textDocument"`
	} `json:"capabilities"`
}

func (s *Server) initialize(_ context.Context, req jsonrpc2.Request, _ jsonrpc2.Replier) (any, error) {
	var p initializeParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	c := p.Capabilities
	caps := clientCaps{
		progress:         c.Window.WorkDoneProgress,
		applyEdit:        c.Workspace.ApplyEdit,
		documentChanges:  c.Workspace.WorkspaceEdit.DocumentChanges,
		annotations:      len(c.Workspace.WorkspaceEdit.ChangeAnnotationSupport) > 0 && string(c.Workspace.WorkspaceEdit.ChangeAnnotationSupport) != "null",
		resourceCreate:   slices.Contains(c.Workspace.WorkspaceEdit.ResourceOperations, "create"),
		showDocument:     c.Window.ShowDocument.Support,
		messageActions:   c.Window.ShowMessage == nil || c.Window.ShowMessage.MessageActionItem != nil,
		codeActionLit:    len(c.TextDocument.CodeAction.CodeActionLiteralSupport) > 0,
		codeActionResolv: len(c.TextDocument.CodeAction.ResolveSupport) > 0,
		encoding:         UTF16,
	}
	// UTF-16 unless the client offers UTF-8 (cheaper: offsets are bytes).
	for _, e := range c.General.PositionEncodings {
		if e == UTF8.String() {
			caps.encoding = UTF8
		}
	}
	if p.ClientInfo != nil {
		caps.name = p.ClientInfo.Name
	}

	var folders []string
	for _, f := range p.WorkspaceFolders {
		if path, err := URIToPath(protocol.DocumentURI(f.URI)); err == nil {
			folders = append(folders, path)
		}
	}
	if len(folders) == 0 && p.RootURI != "" {
		if path, err := URIToPath(p.RootURI); err == nil {
			folders = append(folders, path)
		}
	}
	if len(folders) == 0 && p.RootPath != "" {
		if abs, err := filepath.Abs(p.RootPath); err == nil {
			folders = append(folders, abs)
		}
	}

	s.mu.Lock()
	s.client = caps
	s.folders = folders
	s.editor = p.InitializationOptions
	s.state = stateInitialized
	s.mu.Unlock()

	return map[string]any{
		"capabilities": map[string]any{
			"positionEncoding": caps.encoding.String(),
			"textDocumentSync": map[string]any{
				"openClose": true,
				"change":    2, // incremental
				"save":      map[string]any{"includeText": false},
			},
			"codeActionProvider": map[string]any{
				"codeActionKinds": []string{"quickfix", "refactor", "refactor.rewrite", KindFix, KindExplain, KindEdit, KindTests, KindDocument},
				"resolveProvider": true,
			},
			"executeCommandProvider": map[string]any{"commands": Commands},
			"workspace": map[string]any{
				"workspaceFolders": map[string]any{"supported": true, "changeNotifications": true},
			},
		},
		"serverInfo": map[string]any{"name": "reika-lsp", "version": version},
	}, nil
}

// initialized connects to the engine in the background, so that the first
// ask finds it ready and the user hears at once about a missing window.
func (s *Server) initialized(context.Context, jsonrpc2.Request, jsonrpc2.Replier) (any, error) {
	s.goOwned(func(ctx context.Context) {
		if _, err := s.session(ctx); err != nil {
			s.showMessage(msgError, "Reika: %v", err)
		}
	})
	return nil, nil
}

func (s *Server) shutdown(context.Context, jsonrpc2.Request, jsonrpc2.Replier) (any, error) {
	s.mu.Lock()
	s.state = stateShutdown
	s.mu.Unlock()
	s.cancelRun() // a run in flight stops; its transcript is kept
	return nil, nil
}

// didChangeConfiguration takes the editor's settings: {"reika": {...}} or
// the settings themselves. A change to how the engine is reached starts a
// new session on the next ask.
func (s *Server) didChangeConfiguration(_ context.Context, req jsonrpc2.Request, _ jsonrpc2.Replier) (any, error) {
	var p struct {
		Settings map[string]any `json:"settings"`
	}
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.editor = p.Settings
	s.mu.Unlock()
	s.resetSession("the settings changed")
	return nil, nil
}

func (s *Server) didChangeWorkspaceFolders(_ context.Context, req jsonrpc2.Request, _ jsonrpc2.Replier) (any, error) {
	var p struct {
		Event struct {
			Added   []protocol.WorkspaceFolder `json:"added"`
			Removed []protocol.WorkspaceFolder `json:"removed"`
		} `json:"event"`
	}
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	for _, f := range p.Event.Removed {
		if path, err := URIToPath(protocol.DocumentURI(f.URI)); err == nil {
			s.folders = slices.DeleteFunc(s.folders, func(x string) bool { return x == path })
		}
	}
	for _, f := range p.Event.Added {
		if path, err := URIToPath(protocol.DocumentURI(f.URI)); err == nil && !slices.Contains(s.folders, path) {
			s.folders = append(s.folders, path)
		}
	}
	s.mu.Unlock()
	s.resetSession("the workspace folders changed")
	return nil, nil
}
