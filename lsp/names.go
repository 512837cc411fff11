package lsp

import "github.com/reika-lsp/reika/agent"

// The names Reika adds to the protocol. They are declared once, here; the
// editor plugins mirror them in one file each, and a test checks they do
// not drift.
const (
	// CmdAsk runs the agent: {instruction, uri?, range?, trust?, queue?,
	// diagnostics?}, diagnostics the editor's errors and warnings, a list of
	// publishDiagnostics params.
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
	// transcript (after a restart of the editor, or a crash), or the
	// session {id} names (one of reika.listSessions').
	CmdResume = "reika.resume"
	// CmdListSessions lists the workspace's sessions, both front ends',
	// newest first, with their titles.
	CmdListSessions = "reika.listSessions"
	// CmdSetModel switches the session to {model}, one the engine serves;
	// without one it says the model and those the engine serves.
	CmdSetModel = "reika.setModel"
	// CmdShowRecap opens the current recap as a document the user can
	// edit; the edit replaces it on the next request.
	CmdShowRecap = "reika.showRecap"
	// CmdApplyProposal, CmdApplyHunk and CmdRejectProposal answer a
	// proposal offered as code actions to a client without
	// workspace/applyEdit: {id, hunk?}.
	CmdApplyProposal  = "reika.applyProposal"
	CmdApplyHunk      = "reika.applyHunk"
	CmdRejectProposal = "reika.rejectProposal"
	// CmdUndoRun reverts the edits the last run applied, where the text
	// since is unchanged, as one workspace edit.
	CmdUndoRun = "reika.undoRun"

	// StatusNotification carries the ctx chip's fields to status lines.
	StatusNotification = "reika/status"
	// AnswerNotification carries a run's answer in full, for a client that
	// shows the conversation (the end-of-run message holds it on one line,
	// or names a document).
	AnswerNotification = "reika/answer"
	// AnswersCapability, true in the client's experimental capabilities,
	// says it shows reika/answer whole where the user looks (VS Code's
	// panel): the server then opens no document with a long answer.
	AnswersCapability = "reikaAnswers"

	// TrustAsk and TrustPlan are reika.ask's "trust" (its run's mode,
	// tools.Mode) besides the default: every edit and command asks first;
	// read-only, ending in a numbered plan.
	TrustAsk  = "ask"
	TrustPlan = "plan"
)

// Commands lists every command the server executes, in the order
// initialize advertises them.
var Commands = []string{
	CmdAsk, CmdCompact, CmdStatus, CmdCancel, CmdSave, CmdNewSession, CmdResume, CmdShowRecap,
	CmdApplyProposal, CmdApplyHunk, CmdRejectProposal, CmdUndoRun, CmdListSessions, CmdSetModel,
}

// Code action kinds Reika offers.
const (
	KindFix      = "quickfix.reika"
	KindExplain  = "refactor.reika.explain"
	KindEdit     = "refactor.rewrite.reika"
	KindTests    = "refactor.reika.tests"
	KindDocument = "refactor.reika.document"
	KindProposal = "quickfix.reika.proposal"
	// KindComment is "Reika: do what this comment says": the instruction
	// comes from a comment at the cursor ("// reika: add a timeout"), so
	// that clients that cannot pass a command arguments can ask freely.
	KindComment = "refactor.rewrite.reika.comment"
	// KindUndo is "Reika: undo this run", on the files the last run
	// changed.
	KindUndo = "refactor.reika.undo"
)

// The shapes of what Reika's commands return and of reika/status, declared
// once. Fields are in alphabetical order, the order in which these objects
// went on the wire when they were maps.

// StatusParams are reika/status's params: the ctx chip's fields.
type StatusParams struct {
	// Breakdown is the last request by part, with the reserve and the
	// free room, in tokens; absent before a session.
	Breakdown *agent.Breakdown `json:"breakdown,omitempty"`
	Percent   int              `json:"percent"` // of the shed point
	Running   bool             `json:"running"` // a run is under way
	ShedPoint int              `json:"shed_point"`
	Size      int              `json:"size"` // tokens in the last request
	Text      string           `json:"text"` // the chip as the status line shows it
	Warn      bool             `json:"warn"` // a shed is near
	Window    int              `json:"window"`
}

// AnswerParams are reika/answer's params: the model's final answer as it
// wrote it, what the run changed, and the chip at its end.
type AnswerParams struct {
	Answer  string `json:"answer"`
	Chip    string `json:"chip"`
	Summary string `json:"summary"` // "1 change applied to greet.go"
}

// AskResult is reika.ask's answer: whether a run started, or the ask
// joined the run under way (its next message), or waits to run after it.
type AskResult struct {
	Joined  bool   `json:"joined,omitempty"`
	Queued  bool   `json:"queued,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Started bool   `json:"started"`
}

// CancelResult is reika.cancel's answer: whether a run was stopped.
type CancelResult struct {
	Cancelled bool `json:"cancelled"`
}

// NewSessionResult is reika.newSession's answer.
type NewSessionResult struct {
	OK bool `json:"ok"`
}

// StatusResult is reika.status's answer: the chip, the budget and where
// the session runs.
type StatusResult struct {
	// BashAllow is the allow list the session has in force: the commands
	// that run unasked (bash_allow; a settings push never gives it).
	BashAllow []string `json:"bash_allow,omitempty"`
	// Breakdown is the last request by part, with the reserve and the
	// free room, in tokens.
	Breakdown agent.Breakdown `json:"breakdown"`
	Budget    agent.Budget    `json:"budget"`
	// CacheClass is how the engine reuses its prompt cache
	// (contextwin.CacheClass); Cache says it in words, with its source
	// and what it costs.
	CacheClass string `json:"cache_class"`
	Cache      string `json:"cache"`
	Chip       string `json:"chip"`
	Endpoint   string `json:"endpoint"`
	// Ignored are the notices of the trust-widening values of settings
	// pushes that were not taken (config.TrustKeys), one sentence each.
	Ignored   []string `json:"ignored,omitempty"`
	Model     string   `json:"model"`
	Overrides []string `json:"overrides,omitempty"` // editor settings over the config file's or the environment's
	Percent   int      `json:"percent"`
	Running   bool     `json:"running"`
	// Sandbox says how the agent's commands run: contained, or why not.
	Sandbox string `json:"sandbox"`
	Size    int    `json:"size"`
	// Slot is the llama.cpp slot the session pins (absent for other
	// engines); SlotSaving says its cache is saved after each run.
	Slot       *int   `json:"slot,omitempty"`
	SlotSaving bool   `json:"slot_saving,omitempty"`
	Transcript string `json:"transcript"`
	Warn       bool   `json:"warn"`
	Window     int    `json:"window"`
}

// CompactResult is reika.compact's answer: the prompt's size before and
// after, and the recap's size, or why nothing was folded.
type CompactResult struct {
	After      int    `json:"after"`
	Before     int    `json:"before"`
	Compacted  bool   `json:"compacted"`
	Reason     string `json:"reason,omitempty"`
	RecapChars int    `json:"recap_chars,omitempty"`
}

// UndoResult is reika.undoRun's answer: how many hunks were reverted,
// those left alone (changed since: "a.go line 7"), and why nothing was
// done.
type UndoResult struct {
	Kept     []string `json:"kept,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	Reverted int      `json:"reverted"`
	Undone   bool     `json:"undone"`
}

// PathResult is the answer of reika.save: the file it wrote.
type PathResult struct {
	Path string `json:"path"`
}

// RecapResult is reika.showRecap's answer: the recap document's path, or
// Recap false when there is no recap yet.
type RecapResult struct {
	Path  string `json:"path,omitempty"`
	Recap *bool  `json:"recap,omitempty"` // set (false) only when there is no recap
}

// ResumeResult is reika.resume's answer: whether a session was resumed,
// from which transcript, with how many messages.
type ResumeResult struct {
	Messages int    `json:"messages,omitempty"`
	Path     string `json:"path,omitempty"`
	Resumed  bool   `json:"resumed"`
}

// SessionsResult is reika.listSessions' answer: the workspace's sessions,
// newest first.
type SessionsResult struct {
	Sessions []SessionInfo `json:"sessions"`
}

// SessionInfo is one session of reika.listSessions: its id (reika.resume's
// argument), its title (its first message's first line), when it was last
// written (RFC 3339), and whether it is the session in force.
type SessionInfo struct {
	Current bool   `json:"current,omitempty"`
	ID      string `json:"id"`
	Title   string `json:"title"`
	Updated string `json:"updated"`
}

// ResumeArgs are reika.resume's arguments: the session to resume, the
// latest other one when absent.
type ResumeArgs struct {
	ID string `json:"id,omitempty"`
}

// ModelArgs are reika.setModel's arguments.
type ModelArgs struct {
	Model string `json:"model,omitempty"`
}

// ModelResult is reika.setModel's answer: the model the session's
// requests name, those the engine serves, and what a switch costs (Told),
// when there was one.
type ModelResult struct {
	Model  string   `json:"model"`
	Models []string `json:"models"`
	Told   string   `json:"told,omitempty"`
}

// ProposalArgs are the arguments of reika.applyProposal, reika.applyHunk
// (with Hunk, from 1) and reika.rejectProposal.
type ProposalArgs struct {
	Hunk int    `json:"hunk,omitempty"`
	ID   string `json:"id"`
}
