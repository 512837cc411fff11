package lsp

import (
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// A command picked from a list with no arguments (Helix's
// :lsp-workspace-command, VS Code's palette on a raw command) cannot
// carry what reika.ask or reika.applyProposal need. The user hears how to
// give it, in a warning, and the request fails with the same sentence.

// howToGive says, for each command that needs an argument, how a user
// gives it.
var howToGive = map[string]string{
	CmdAsk: "reika.ask needs an instruction: write a comment `// reika: …` and use the code action \"Reika: do what this comment says\", " +
		"or select code and pick a Reika code action",
	CmdApplyProposal:  "reika.applyProposal needs a proposal: open the code actions on the proposed file and pick \"Reika: apply the proposal\"",
	CmdApplyHunk:      "reika.applyHunk needs a proposal and a hunk: open the code actions on the proposed file and pick \"Reika: apply hunk …\"",
	CmdRejectProposal: "reika.rejectProposal needs a proposal: open the code actions on the proposed file and pick \"Reika: reject the proposal …\"",
}

// missingArgument tells the user how to give cmd its argument, and
// returns the error to answer with.
func (s *Server) missingArgument(cmd string) error {
	how := howToGive[cmd]
	s.showMessage(protocol.MessageTypeWarning, "Reika: %s", how)
	return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s", how)
}
