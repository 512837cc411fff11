package acp

import (
	"context"
	"slices"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reika-lsp/reika/agent/tools"
)

// answerOptions are the protocol's options for the tools' answers: the
// option's id is the answer. "For this run" is not remembered past the
// run, so its kind is allow_once: a client shows allow_always as "Always
// accept", which it is not.
var answerOptions = map[tools.Answer]sdk.PermissionOption{
	tools.Once:    {OptionId: sdk.PermissionOptionId(tools.Once), Name: "Allow once", Kind: sdk.PermissionOptionKindAllowOnce},
	tools.ThisRun: {OptionId: sdk.PermissionOptionId(tools.ThisRun), Name: "Allow for this run", Kind: sdk.PermissionOptionKindAllowOnce},
	tools.Always:  {OptionId: sdk.PermissionOptionId(tools.Always), Name: "Always allow", Kind: sdk.PermissionOptionKindAllowAlways},
	tools.Deny:    {OptionId: sdk.PermissionOptionId(tools.Deny), Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce},
}

// ask puts a tool's question to the user with session/request_permission:
// the answers it offers, then Reject, on the tool call that asks.
func (s *session) ask(ctx context.Context, q tools.Question) tools.Answer {
	// The title says why in a few words and shows the command or URL
	// whole, what would hide text made visible (tools.Visible).
	title := tools.Visible(q.Subject)
	if q.Label != "" {
		title = q.Label + ": " + title
	}
	content := []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(q.Why))}
	switch {
	case q.Kind == tools.AskMCP:
		// An MCP tool's arguments, whole.
		content = append(content, sdk.ToolContent(sdk.TextBlock("```json\n"+tools.Visible(q.Detail)+"\n```")))
	case q.Detail != "":
		content = append(content, sdk.ToolContent(sdk.TextBlock("```diff\n"+q.Detail+"\n```")))
	}
	return s.permission(ctx, sdk.ToolCallUpdate{Title: &title, Content: content}, append(slices.Clone(q.Answers), tools.Deny))
}

// permitChange asks for a change the mode or a protected path holds back,
// with its diff.
func (s *session) permitChange(ctx context.Context, p tools.Proposal, why string) tools.Answer {
	title := "Change " + p.Path
	diff := sdk.ToolDiffContent(p.Abs, p.New, p.Old)
	if p.Create {
		title, diff = "Create "+p.Path, sdk.ToolDiffContent(p.Abs, p.New)
	}
	content := []sdk.ToolCallContent{diff, sdk.ToolContent(sdk.TextBlock(why))}
	return s.permission(ctx, sdk.ToolCallUpdate{Title: &title, Content: content, Locations: []sdk.ToolCallLocation{{Path: p.Abs}}},
		[]tools.Answer{tools.Once, tools.Deny})
}

// permission asks and reads the answer: the option chosen, Deny when the
// turn was cancelled, Unasked when the client did not answer.
func (s *session) permission(ctx context.Context, call sdk.ToolCallUpdate, answers []tools.Answer) tools.Answer {
	s.mu.Lock()
	call.ToolCallId = sdk.ToolCallId(s.running)
	if call.ToolCallId == "" {
		s.serial++
		call.ToolCallId = sdk.ToolCallId("ask-" + itoa(s.serial))
	}
	s.mu.Unlock()
	var opts []sdk.PermissionOption
	for _, a := range answers {
		if o, ok := answerOptions[a]; ok {
			opts = append(opts, o)
		}
	}
	res, err := s.srv.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{SessionId: s.id, ToolCall: call, Options: opts})
	switch {
	case ctx.Err() != nil:
		return tools.Deny
	case err != nil:
		return tools.Unasked
	case res.Outcome.Selected != nil:
		if a := tools.Answer(res.Outcome.Selected.OptionId); slices.Contains(answers, a) {
			return a
		}
	}
	return tools.Deny
}
