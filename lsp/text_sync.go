package lsp

import (
	"context"
	"encoding/json"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

func (s *Server) didOpen(_ context.Context, req jsonrpc2.Request, _ jsonrpc2.Replier) (any, error) {
	var p protocol.DidOpenTextDocumentParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	d := p.TextDocument
	if err := s.docs.DidOpen(d.URI, string(d.LanguageID), d.Version, d.Text); err != nil {
		s.logMessage(protocol.MessageTypeWarning, "Reika does not keep %s: %v", d.URI, err)
	} else if _, err := URIToPath(d.URI); err != nil && isFileURI(d.URI) {
		// Kept like an untitled buffer, but the agent's tools, which
		// work on paths, will never see it: say so.
		s.logMessage(protocol.MessageTypeWarning, "Reika cannot tell which file %s is (%v): the agent will not see this document", d.URI, err)
	} else {
		s.mapOpened(d.URI)
	}
	return nil, nil
}

func isFileURI(uri protocol.DocumentURI) bool {
	return len(uri) >= 5 && strings.EqualFold(string(uri[:5]), "file:")
}

// didChangeParams are go.lsp.dev's DidChangeTextDocumentParams with the
// changes kept raw, for DecodeChanges: its TextDocumentContentChangeEvent
// holds the range as a value, so a whole-document change reads as an edit
// at 0:0 (defect 3 in doc.go, pinned by TestContentChangeRangeIsAValue).
type didChangeParams struct {
	TextDocument   protocol.VersionedTextDocumentIdentifier `json:"textDocument"`
	ContentChanges json.RawMessage                          `json:"contentChanges"`
}

// didChange applies incremental changes.
func (s *Server) didChange(_ context.Context, req jsonrpc2.Request, _ jsonrpc2.Replier) (any, error) {
	var p didChangeParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	changes, err := DecodeChanges(p.ContentChanges)
	if err == nil {
		err = s.docs.DidChange(p.TextDocument.URI, p.TextDocument.Version, changes, s.encoding())
	}
	if err == nil {
		s.mapq.mark(p.TextDocument.URI)
	} else if s.docs.Lose(p.TextDocument.URI, err.Error()) {
		// The document is no longer in step: the tools read the disk
		// rather than a wrong text, no edit is placed on the user's
		// unsaved text, and the user hears why once.
		s.showMessage(protocol.MessageTypeWarning, "Reika lost track of %s (%v): it will not change this file until the editor sends its text again (reopen the file)", p.TextDocument.URI, err)
	} else {
		s.logMessage(protocol.MessageTypeWarning, "Reika ignored a change to %s: %v", p.TextDocument.URI, err)
	}
	return nil, nil
}

func (s *Server) didClose(_ context.Context, req jsonrpc2.Request, _ jsonrpc2.Replier) (any, error) {
	var p protocol.DidCloseTextDocumentParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	s.docs.DidClose(p.TextDocument.URI)
	s.unmapDocument(p.TextDocument.URI)
	return nil, nil
}

// didSave notices the user saving the recap document: the edit replaces
// the recap on the next request.
func (s *Server) didSave(_ context.Context, req jsonrpc2.Request, _ jsonrpc2.Replier) (any, error) {
	var p protocol.DidSaveTextDocumentParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	s.recapSaved(p.TextDocument.URI)
	return nil, nil
}

// encoding is the negotiated position encoding.
func (s *Server) encoding() Encoding { return s.caps().encoding }
