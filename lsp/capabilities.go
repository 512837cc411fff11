package lsp

import (
	"fmt"
	"slices"

	"go.lsp.dev/protocol"
)

// clientCaps is what the client said it can do, from initialize. The
// server keeps it in an atomic pointer (Server.client): it is written once,
// by initialize, and only read after.
type clientCaps struct {
	name            string
	progress        bool // window.workDoneProgress
	applyEdit       bool // workspace.applyEdit
	documentChanges bool // workspace.workspaceEdit.documentChanges
	// versioned: the client honours a TextDocumentEdit's version. Neovim
	// does (it skips a stale edit) though it does not advertise
	// documentChanges, and without a version its edits land on the
	// user's newer text.
	versioned bool
	// zeroAsOne: Neovim without a plugin checks only versions above 0
	// (EditOptions.VersionZeroAsOne). A client that advertises
	// documentChanges (Neovim with Reika's plugin) checks them all.
	zeroAsOne bool
	// skipsStale: Neovim skips a text document edit for a version its
	// buffer has passed, answering applied:true. Other clients refuse
	// it, or (eglot 1.17) apply it where it no longer belongs.
	skipsStale bool
	// appliesStale: eglot after 1.9 (it sends clientInfo; 1.9 sends
	// none) counts a document's versions only when it sends the user's
	// typing, so it applies an edit over typing it has not sent yet
	// (the Emacs trials in editors/ show it).
	appliesStale     bool
	annotations      bool // workspace.workspaceEdit.changeAnnotationSupport
	resourceCreate   bool // workspace.workspaceEdit.resourceOperations has "create"
	showDocument     bool // window.showDocument.support
	messageActions   bool // window.showMessage.messageActionItem, or eglot (which answers without saying so)
	codeActionLit    bool // textDocument.codeAction.codeActionLiteralSupport
	codeActionResolv bool // textDocument.codeAction.resolveSupport
	// hierarchicalSymbols: textDocument.documentSymbol.hierarchicalDocumentSymbolSupport.
	hierarchicalSymbols bool
	encoding            Encoding
	// showsAnswers: the client shows reika/answer whole itself (VS Code's
	// panel), so the server opens no answer document for it
	// (experimental.reikaAnswers).
	showsAnswers bool
	// oneLineStatus: the client shows a message in one line of its status
	// bar, cut at the terminal's width (Helix).
	oneLineStatus bool
}

// newClientCaps reads what the server needs to know of the client.
func newClientCaps(c protocol.ClientCapabilities, encodings []string, info *protocol.ClientInfo) clientCaps {
	var caps clientCaps
	if info != nil {
		caps.name = info.Name
	}
	if w := c.Window; w != nil {
		caps.progress = w.WorkDoneProgress
		caps.showDocument = w.ShowDocument != nil && w.ShowDocument.Support
	}
	if x, ok := c.Experimental.(map[string]any); ok {
		caps.showsAnswers = x[AnswersCapability] == true
	}
	// Helix shows a message in one line of its status bar, cut at the
	// terminal's width; it handles window/showDocument (opening the file
	// in the current view) though 25.01 does not advertise it.
	caps.oneLineStatus = caps.name == "helix"
	caps.showDocument = caps.showDocument || caps.oneLineStatus
	// The server asks (window/showMessageRequest) only a client that says
	// it shows message actions: one that does not may never answer, and
	// a run would wait for it. eglot answers though it does not say so.
	caps.messageActions = c.Window != nil && c.Window.ShowMessage != nil && c.Window.ShowMessage.MessageActionItem != nil ||
		caps.name == "Eglot"
	if ws := c.Workspace; ws != nil {
		caps.applyEdit = ws.ApplyEdit
		if e := ws.WorkspaceEdit; e != nil {
			caps.documentChanges = e.DocumentChanges
			caps.annotations = e.ChangeAnnotationSupport != nil
			caps.resourceCreate = slices.Contains(e.ResourceOperations, "create")
		}
	}
	caps.versioned = caps.documentChanges || caps.name == "Neovim"
	caps.zeroAsOne = caps.name == "Neovim" && !caps.documentChanges
	caps.skipsStale = caps.name == "Neovim"
	caps.appliesStale = caps.name == "Eglot" && !(info != nil && versionAtMost(info.Version, 1, 9))
	if td := c.TextDocument; td != nil && td.CodeAction != nil {
		caps.codeActionLit = td.CodeAction.CodeActionLiteralSupport != nil
		caps.codeActionResolv = td.CodeAction.ResolveSupport != nil
	}
	if td := c.TextDocument; td != nil && td.DocumentSymbol != nil {
		caps.hierarchicalSymbols = td.DocumentSymbol.HierarchicalDocumentSymbolSupport
	}
	// UTF-16 unless the client offers UTF-8 (cheaper: offsets are bytes).
	caps.encoding = UTF16
	if slices.Contains(encodings, UTF8.String()) {
		caps.encoding = UTF8
	}
	return caps
}

// caps is what the client can do; before initialize, nothing.
func (s *Server) caps() clientCaps {
	if c := s.client.Load(); c != nil {
		return *c
	}
	return clientCaps{encoding: UTF16}
}

// versionAtMost reports whether a version "MAJOR.MINOR[.…]" is at most
// major.minor; false when it does not read so.
func versionAtMost(v string, major, minor int) bool {
	var a, b int
	if n, _ := fmt.Sscanf(v, "%d.%d", &a, &b); n < 2 {
		return false
	}
	return a < major || a == major && b <= minor
}
