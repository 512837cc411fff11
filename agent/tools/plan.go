package tools

import (
	"context"
	"strings"

	"github.com/reika-lsp/reika/contextwin"
)

// Plan mode: a run that looks and proposes nothing. read, glob, grep and
// the navigation tools (definition, references, symbols, hover,
// diagnostics: they only read) run; bash runs only what the read-only
// list allows and asks nothing; edit and write are refused, and so is
// fetch_url when the user's
// settings turn it off (as in any run; when they turn it on it asks per
// host as always: nothing leaves unasked). The model is told why, in a
// sentence it can act on: put the change in the plan.

// The reasons a plan-mode run gives the model.
const (
	planNoEdits   = "plan mode: no edits; state the change in the plan"
	planReadOnly  = "plan mode: read-only; this command is not on the read-only list"
	planContained = "plan mode: read-only; commands run contained and without the network here"
)

// readOnlyEntries is the read-only list: the programs that read and
// print, with their rules (bashrules.go) refusing the options that run
// programs or write files. The user's bash_allow list does not widen it:
// an entry there says what may run unasked, not what only reads.
var readOnlyEntries = []string{
	"ls", "cat", "head", "tail", "wc", "echo", "pwd", "true", "false", "grep", "egrep", "fgrep",
	"diff", "cmp", "cut", "tr", "nl", "od", "stat", "du", "df", "which", "basename", "dirname",
	"realpath", "readlink", "seq", "test", "[", "jq", "comm", "paste", "rev", "uname",
	"sha256sum", "sha1sum", "md5sum", "file", "find", "git", "sed", "awk", "sort", "rg", "tar",
	"tee", "uniq", "printf", "date", "tree", "go list", "go doc", "go version", "go vet",
}

// planRefusal is the result a tool call gets in a plan-mode run without
// running, or nil when it runs (bash decides for itself: planBash).
func (s *Set) planRefusal(ctx context.Context, tool string) *Result {
	if runOf(ctx).mode != Plan {
		return nil
	}
	switch tool {
	case EditTool, WriteTool:
		r := failf("%s: %s", tool, planNoEdits)
		return &r
	}
	return nil
}

// planBash runs command in a plan-mode run when the read-only list
// allows it, contained when there is a sandbox; it never asks.
func (s *Set) planBash(ctx context.Context, a bashArgs, command string, p contextwin.Payload) Result {
	if a.Network || (a.Outside && s.sandbox != nil) {
		return Result{Error: true, Payload: p, Content: BashTool + ": " + planContained + "; run it without \"network\" and \"outside_sandbox\""}
	}
	why := newAllowlist(readOnlyEntries, s.insideWorkspace).check(command)
	if why != "" {
		msg := planReadOnly
		if !strings.Contains(why, AllowSetting) {
			msg += " (" + why + ")"
		}
		return Result{Error: true, Payload: p, Content: BashTool + ": " + msg + "; read the files instead, or put the command in the plan"}
	}
	text, failed, passed := s.execute(ctx, command, s.sandbox != nil, false)
	return Result{Content: text, Payload: p, Error: failed, Passed: passed}
}
