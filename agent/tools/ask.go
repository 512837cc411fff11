package tools

import (
	"context"
	"sync"
)

// Kind is what a question is about.
type Kind string

// The kinds of question.
const (
	// AskCommand: a command that does not run unasked (off the allow
	// list, asking for the network or to run outside the sandbox, or any
	// command once the run wrote a file and there is no sandbox).
	AskCommand Kind = "command"
	// AskProtected: a change to a protected path (see Protection).
	AskProtected Kind = "protected"
	// AskEdit: any change, in a run that applies nothing unasked.
	AskEdit Kind = "edit"
	// AskLeft: a protected path a contained command created, changed or
	// removed, kept only on a yes (Once); Subject names it, or counts
	// them when Detail lists several.
	AskLeft Kind = "left"
	// AskFetch: fetch_url to a host not yet allowed in this session.
	AskFetch Kind = "fetch"
	// AskMCP: a call to a tool of an MCP server (agent/mcp); Subject
	// names the server and the tool, Detail the arguments whole.
	AskMCP Kind = "mcp"
)

// Question is what the agent asks the user before something that could
// run, persist or leave.
type Question struct {
	Kind Kind
	// Subject is what would happen: the command line, the path, the whole
	// URL.
	Subject string
	// Why says in a few words why it asks ("rm is not on the bash_allow
	// list", ".git/** is protected: …").
	Why string
	// Label is the reason in two or three words, for the question's
	// title: "outside the sandbox", "network", "not on the allow list",
	// "protected".
	Label string
	// Detail is the change to a protected path, as a unified diff; for
	// AskMCP, the arguments as one line of JSON.
	Detail string
	// Network and Outside: the command asks for the network, or to run
	// outside the sandbox (AskCommand).
	Network, Outside bool
	// Answers are the answers the user may give besides Deny, in the
	// order to offer them.
	Answers []Answer
}

// Answer is the user's answer to a question.
type Answer string

// The answers.
const (
	// Deny: no, and the model is told the user said no.
	Deny Answer = "deny"
	// Once: this time.
	Once Answer = "once"
	// ThisRun: for the rest of this run (an ask and what it does until
	// its answer); for fetch_url, the host for the rest of the session.
	ThisRun Answer = "run"
	// Always: a command added to the user-level bash_allow list, an MCP
	// tool to its mcp_allow list.
	Always Answer = "always"
	// Unasked is what an Ask returns when nobody could be asked (the
	// editor cannot show a question, or it did not answer).
	Unasked Answer = ""
)

// Ask puts a question to the user and waits for the answer.
type Ask func(ctx context.Context, q Question) Answer

// Remember keeps a command the user allowed always: it adds entry to the
// user-level bash_allow list (never to anything in the workspace).
type Remember func(entry string) error

// A run is one ask of the user and the rounds it takes: what the user
// allowed for the run, and whether the run has changed a file. Front ends
// and the agent put one in the context of each run (WithRun); a call with
// none is a run of its own.
type run struct {
	mu      sync.Mutex
	allowed map[string]bool // commands allowed for this run
	wrote   bool            // the run changed a file (an applied edit, a command that was asked)
	mode    Mode
}

// Mode is how much a run may do unasked.
type Mode string

// The modes.
const (
	// Normal: ordinary edits apply (undo reverts them), protected paths
	// ask, commands run sandboxed when allowed, or ask.
	Normal Mode = ""
	// AskAll: every edit and every command asks first.
	AskAll Mode = "ask"
	// Plan: read-only, and nothing asks: read, glob and grep run, bash
	// only what the read-only list allows, edit and write are refused
	// (plan.go); the run ends in a numbered plan.
	Plan Mode = "plan"
)

type runKey struct{}

// WithRun returns a context for one run in the given mode. A context that
// already carries a run is returned as it is.
func WithRun(ctx context.Context, mode Mode) context.Context {
	if _, ok := ctx.Value(runKey{}).(*run); ok {
		return ctx
	}
	return context.WithValue(ctx, runKey{}, &run{allowed: map[string]bool{}, mode: mode})
}

// WithChildRun returns a context for a run inside the one ctx carries (a
// subagent's), in the given mode and with none of its grants.
func WithChildRun(ctx context.Context, mode Mode) context.Context {
	return context.WithValue(ctx, runKey{}, &run{allowed: map[string]bool{}, mode: mode})
}

// RunMode is the mode of the run ctx carries.
func RunMode(ctx context.Context) Mode { return runOf(ctx).mode }

// runOf is the run of ctx, or a fresh one for a call outside any run.
func runOf(ctx context.Context) *run {
	if r, ok := ctx.Value(runKey{}).(*run); ok {
		return r
	}
	return &run{allowed: map[string]bool{}}
}

func (r *run) allows(command string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.allowed[command]
}

func (r *run) allow(command string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.allowed[command] = true
}

// RunAllows reports whether the run ctx carries was allowed key (a grant
// of ThisRun) by a tool outside this package: an MCP tool's.
func RunAllows(ctx context.Context, key string) bool { return runOf(ctx).allows(grantKey(key)) }

// RunAllow grants key for the rest of the run ctx carries.
func RunAllow(ctx context.Context, key string) { runOf(ctx).allow(grantKey(key)) }

// grantKey keeps another package's grants apart from commands: no
// command line starts with a NUL.
func grantKey(key string) string { return "\x00" + key }

func (r *run) setWrote() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wrote = true
}

func (r *run) hasWritten() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.wrote
}
