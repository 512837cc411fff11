package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent/tools"
)

// codeAction offers Reika's actions on a range: each a reika.ask with an
// instruction and the place. It is pure computation — no engine, no disk
// beyond what the editor sent — so it answers at once, and a cancelled or
// repeated request costs nothing.
func (s *Server) codeAction(_ context.Context, req jsonrpc2.Request, _ jsonrpc2.Replier) (any, error) {
	var p protocol.CodeActionParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	uri, r := p.TextDocument.URI, p.Range
	if path, err := URIToPath(uri); err == nil {
		if _, inside := s.mapPath(path); !inside {
			return []codeAction{}, nil // an ask about it would be refused
		}
	}
	name := s.relative(uriPath(uri))

	var problems []string
	for _, d := range p.Context.Diagnostics {
		msg := strings.TrimSpace(d.Message)
		if d.Source != "" {
			msg = d.Source + ": " + msg
		}
		problems = append(problems, fmt.Sprintf("- line %d: %s", d.Range.Start.Line+1, msg))
	}
	var actions []action
	comment, fromComment := s.commentAsk(uri, r)
	if fromComment {
		actions = append(actions, action{KindComment, "Reika: do what this comment says", comment.Instruction, true})
	}
	if len(problems) > 0 {
		actions = append(actions, action{KindFix, "Reika: fix this problem",
			"Fix the problem the editor reports here, changing as little as needed:\n" + strings.Join(problems, "\n"), true})
	} else {
		actions = append(actions, action{KindFix, "Reika: fix this code",
			"Find what is wrong with this code and fix it, changing as little as needed.", false})
	}
	actions = append(actions,
		action{KindExplain, "Reika: explain this code", "Explain what this code does and why, for a reader new to it. Do not change anything.", false},
		action{KindEdit, "Reika: improve the selection", "Improve this code: clearer, simpler, same behaviour. Keep the change small.", false},
		action{KindTests, "Reika: write tests", "Write tests for this code, in the project's existing style and test layout.", false},
		action{KindDocument, "Reika: document this code", "Write or improve the doc comments of this code, in the project's style. Change nothing else.", false},
	)

	out := []codeAction{}
	for _, a := range actions {
		if !wanted(a.kind, p.Context.Only) {
			continue
		}
		args := askArgs{Instruction: a.instruction, URI: uri, Range: &r}
		if a.kind == KindComment {
			args = comment
		}
		out = append(out, codeAction{CodeAction: protocol.CodeAction{
			Title: a.title, Kind: protocol.CodeActionKind(a.kind), IsPreferred: a.preferred,
			Command: &protocol.Command{Title: a.title, Command: CmdAsk, Arguments: []any{args}},
		}})
	}
	if path, err := URIToPath(uri); err == nil && s.runs.canUndo(path) && wanted(KindUndo, p.Context.Only) {
		out = append(out, codeAction{CodeAction: protocol.CodeAction{
			Title: "Reika: undo this run", Kind: KindUndo,
			Command: &protocol.Command{Title: "Reika: undo this run", Command: CmdUndoRun},
		}})
	}
	for _, o := range s.offers.forURI(uri) {
		out = append(out, s.offerActions(o, name)...)
	}
	if !s.caps().codeActionLit {
		return commandsOf(out), nil
	}
	return out, nil
}

// codeAction is a protocol.CodeAction whose edit can hold what Reika
// sends: go.lsp.dev's WorkspaceEdit has no file creation or change
// annotations (defect 6 in doc.go, pinned by TestWorkspaceEditDocumentChanges).
type codeAction struct {
	protocol.CodeAction
	Edit *WorkspaceEdit `json:"edit,omitempty"`
}

// commandsOf is what a client without code action literals gets: the
// actions' commands.
func commandsOf(actions []codeAction) []protocol.Command {
	cmds := make([]protocol.Command, 0, len(actions))
	for _, a := range actions {
		cmds = append(cmds, *a.Command)
	}
	return cmds
}

// action is one of Reika's code actions.
type action struct {
	kind, title, instruction string
	preferred                bool
}

// wanted reports whether a kind passes the client's "only" filter; an
// empty or unknown filter lets everything through. (The filter is read
// leniently: Neovim 0.7 sends a junk value set.)
func wanted(kind string, only []protocol.CodeActionKind) bool {
	if len(only) == 0 {
		return true
	}
	for _, o := range only {
		if o == "" || kind == string(o) || strings.HasPrefix(kind, string(o)+".") {
			return true
		}
	}
	return false
}

// offerActions are the code actions of a waiting proposal: apply it whole,
// apply one hunk, reject it. Each carries its edit, so a client without
// workspace/applyEdit applies it itself, then runs the command that tells
// the server. The edits are planned on the document as it is now: the
// user may have typed since the proposal was offered. When it no longer
// fits, only "reject" is offered.
func (s *Server) offerActions(o *offered, name string) []codeAction {
	c := s.caps()
	opt := EditOptions{DocumentChanges: c.documentChanges, ResourceCreate: c.resourceCreate}
	pos := s.position(c.encoding)
	plan, err := PlanEdit(o.plan.Proposal, s.current(o.plan.Proposal.Abs))
	if roots := s.folders.all(); err == nil && len(roots) > 0 {
		// Judged as the file system stands now: the client writes it
		// when the user picks the action.
		var q tools.Proposal
		if q, err = tools.Rejudge(roots, plan.Proposal); err == nil {
			plan.Proposal.Protected = q.Protected
		}
	}
	if err != nil {
		plan.Hunks = nil
		plan.Proposal.Create = false
	}
	what := changeLabel(plan)
	if why := plan.Proposal.Protected; why != "" {
		what += ", PROTECTED: " + why
	}
	var out []codeAction
	add := func(title string, edit *WorkspaceEdit, cmd string, args ProposalArgs) {
		out = append(out, codeAction{
			CodeAction: protocol.CodeAction{Title: title, Kind: KindProposal,
				Command: &protocol.Command{Title: title, Command: cmd, Arguments: []any{args}}},
			Edit: edit,
		})
	}
	if err == nil {
		if whole, err := BuildWorkspaceEdit([]EditPlan{plan}, PathToURI, pos, opt); err == nil {
			s.offers.setExpected(o, "all", expectLanding(plan))
			add(fmt.Sprintf("Reika: apply the proposal (%s)", what), &whole, CmdApplyProposal, ProposalArgs{ID: o.id})
		}
	}
	if len(plan.Hunks) > 1 {
		for i := range plan.Hunks {
			if one, err := HunkWorkspaceEdit(plan, plan.Hunks[i].Index, PathToURI, pos, opt); err == nil {
				only := plan
				only.Hunks = plan.Hunks[i : i+1]
				s.offers.setExpected(o, fmt.Sprintf("hunk %d", i+1), expectLanding(only))
				add(fmt.Sprintf("Reika: apply hunk %d of %d to %s", i+1, len(plan.Hunks), name), &one, CmdApplyHunk, ProposalArgs{ID: o.id, Hunk: i + 1})
			}
		}
	}
	add(fmt.Sprintf("Reika: reject the proposal for %s", name), nil, CmdRejectProposal, ProposalArgs{ID: o.id})
	return out
}

// codeActionResolve returns the action as it is: Reika's actions carry
// everything already; resolve is advertised for clients that ask for it.
func (s *Server) codeActionResolve(_ context.Context, req jsonrpc2.Request, _ jsonrpc2.Replier) (any, error) {
	var ca json.RawMessage
	if err := decode(req, &ca); err != nil {
		return nil, err
	}
	return ca, nil
}

// uriPath is a URI's path, or the URI itself when it is not a file.
func uriPath(uri protocol.DocumentURI) string {
	if p, err := URIToPath(uri); err == nil {
		return p
	}
	return string(uri)
}
