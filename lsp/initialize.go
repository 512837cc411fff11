package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// version is reported in initialize's serverInfo.
// Version is the server's version, as initialize and `reika-lsp version`
// report it.
const Version = "0.1.0"

// initializeParams are go.lsp.dev's, with the two things its model does
// not hold as Reika needs them: the client's position encodings (LSP
// 3.17, not in its 3.16 model; pinned by TestPositionEncodingNotModelled)
// and the editor's settings, kept raw.
type initializeParams struct {
	protocol.InitializeParams
	InitializationOptions json.RawMessage `json:"initializationOptions"`
	Capabilities          struct {
		protocol.ClientCapabilities
		General struct {
			PositionEncodings []string `json:"positionEncodings"`
		} `json:"general"`
	} `json:"capabilities"`
}

// readInitialize decodes initialize's params. A field of an unexpected
// shape (Lua writes an empty list as {}) is left at its zero value and
// reported as skipped: encoding/json reads everything else, and the
// server would rather start knowing most of what the client can do than
// refuse the connection over a capability it never reads.
func readInitialize(raw json.RawMessage) (p initializeParams, skipped, err error) {
	if len(raw) == 0 {
		return p, nil, nil
	}
	err = json.Unmarshal(raw, &p)
	if typeErr := (*json.UnmarshalTypeError)(nil); errors.As(err, &typeErr) {
		return p, err, nil
	}
	return p, nil, err
}

// initializeResult is go.lsp.dev's, with positionEncoding in the server's
// capabilities (LSP 3.17, not in its 3.16 model; pinned by
// TestPositionEncodingNotModelled).
type initializeResult struct {
	Capabilities struct {
		PositionEncoding string `json:"positionEncoding"`
		protocol.ServerCapabilities
	} `json:"capabilities"`
	ServerInfo *protocol.ServerInfo `json:"serverInfo,omitempty"`
}

func (s *Server) initialize(_ context.Context, req jsonrpc2.Request, _ jsonrpc2.Replier) (any, error) {
	p, skipped, err := readInitialize(req.Params())
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: %v", req.Method(), err)
	}
	if skipped != nil {
		s.log.Printf("initialize: part of the client's params has an unexpected shape and is left out: %v", skipped)
	}
	settings, err := settingsObject(req.Method(), p.InitializationOptions)
	if err != nil {
		return nil, err
	}
	caps := newClientCaps(p.Capabilities.ClientCapabilities, p.Capabilities.General.PositionEncodings, p.ClientInfo)
	s.client.Store(&caps)
	s.folders.set(initialFolders(p.InitializeParams))
	s.mu.Lock()
	s.editor = editorSettings{startup: settings}
	s.mu.Unlock()
	s.state.Store(int32(stateInitialized))

	var res initializeResult
	res.Capabilities.PositionEncoding = caps.encoding.String()
	res.Capabilities.ServerCapabilities = protocol.ServerCapabilities{
		TextDocumentSync: &protocol.TextDocumentSyncOptions{
			OpenClose: true,
			Change:    protocol.TextDocumentSyncKindIncremental,
			Save:      &protocol.SaveOptions{IncludeText: false},
		},
		DocumentSymbolProvider: true,
		CodeActionProvider: &protocol.CodeActionOptions{
			CodeActionKinds: []protocol.CodeActionKind{protocol.QuickFix, protocol.Refactor, protocol.RefactorRewrite,
				KindFix, KindExplain, KindEdit, KindTests, KindDocument},
			ResolveProvider: true,
		},
		ExecuteCommandProvider: &protocol.ExecuteCommandOptions{Commands: Commands},
		Workspace: &protocol.ServerCapabilitiesWorkspace{
			WorkspaceFolders: &protocol.ServerCapabilitiesWorkspaceFolders{Supported: true, ChangeNotifications: true},
		},
	}
	res.ServerInfo = &protocol.ServerInfo{Name: "reika-lsp", Version: Version}
	return &res, nil
}

// initialFolders are the workspace folders initialize names: its folders,
// else its root URI, else its root path.
func initialFolders(p protocol.InitializeParams) []string {
	var folders []string
	for _, f := range p.WorkspaceFolders {
		if path, err := URIToPath(protocol.DocumentURI(f.URI)); err == nil {
			folders = append(folders, path)
		}
	}
	//lint:ignore SA1019 a client without workspace folders names its root only in these
	rootURI, rootPath := p.RootURI, p.RootPath
	if len(folders) == 0 && rootURI != "" {
		if path, err := URIToPath(rootURI); err == nil {
			folders = append(folders, path)
		}
	}
	if len(folders) == 0 && rootPath != "" {
		if abs, err := filepath.Abs(rootPath); err == nil {
			folders = append(folders, abs)
		}
	}
	return folders
}

// initialized connects to the engine in the background, so that the first
// ask finds it ready and the user hears at once about a missing window.
func (s *Server) initialized(context.Context, jsonrpc2.Request, jsonrpc2.Replier) (any, error) {
	// The session starts now, so that the engine is found (and warmed)
	// before the first ask. A failure goes to the log only: the first
	// ask shows it, once, when the user needs the engine. Without a
	// workspace folder the first open document names the project.
	if len(s.workspace()) == 0 {
		return nil, nil
	}
	s.goOwned(func(ctx context.Context) {
		if _, err := s.session(ctx); err != nil && ctx.Err() == nil {
			s.logMessage(protocol.MessageTypeError, "Reika: %v", err)
		}
	})
	return nil, nil
}

func (s *Server) shutdown(context.Context, jsonrpc2.Request, jsonrpc2.Replier) (any, error) {
	s.state.Store(int32(stateShutdown))
	s.cancelRun() // a run in flight stops; its transcript is kept
	return nil, nil
}
