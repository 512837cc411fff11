package lsp

// The names Reika adds to the protocol. They are declared once, here; the
// editor plugins mirror them in one file each, and a test checks they do
// not drift.
const (
	// CmdAsk runs the agent: {instruction, uri?, range?}.
	CmdAsk = "reika.ask"
	// CmdCompact writes the note and folds now.
	CmdCompact = "reika.compact"
	// CmdStatus returns (and shows) the ctx chip and the budget.
	CmdStatus = "reika.status"
	// CmdCancel stops the run under way.
	CmdCancel = "reika.cancel"
	// CmdSave writes the whole transcript as Markdown and opens it.
	CmdSave = "reika.save"
	// CmdNewSession starts a new session.
	CmdNewSession = "reika.newSession"
	// CmdResume continues the workspace's previous session from its
	// transcript (after a restart of the editor, or a crash).
	CmdResume = "reika.resume"
	// CmdShowRecap opens the current recap as a document the user can
	// edit; the edit replaces it on the next request.
	CmdShowRecap = "reika.showRecap"
	// CmdApplyProposal, CmdApplyHunk and CmdRejectProposal answer a
	// proposal offered as code actions to a client without
	// workspace/applyEdit: {id, hunk?}.
	CmdApplyProposal  = "reika.applyProposal"
	CmdApplyHunk      = "reika.applyHunk"
	CmdRejectProposal = "reika.rejectProposal"

	// StatusNotification carries the ctx chip's fields to status lines.
	StatusNotification = "reika/status"
)

// Commands lists every command the server executes, in the order
// initialize advertises them.
var Commands = []string{
	CmdAsk, CmdCompact, CmdStatus, CmdCancel, CmdSave, CmdNewSession, CmdResume, CmdShowRecap,
	CmdApplyProposal, CmdApplyHunk, CmdRejectProposal,
}

// Code action kinds Reika offers.
const (
	KindFix      = "quickfix.reika"
	KindExplain  = "refactor.reika.explain"
	KindEdit     = "refactor.rewrite.reika"
	KindTests    = "refactor.reika.tests"
	KindDocument = "refactor.reika.document"
	KindProposal = "quickfix.reika.proposal"
)
