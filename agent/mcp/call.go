package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/contextwin"
)

// Run runs a call: an MCP tool's here, any other by the built-in tools.
func (b *Toolbox) Run(ctx context.Context, call engine.ToolCall) (res tools.Result) {
	r, ok := b.cur.Load().remote[call.Name]
	switch {
	case !ok && strings.HasPrefix(call.Name, Prefix):
		// A resumed session's prefix may name a tool this one lacks, or
		// one its server no longer offers.
		return failf("the MCP tool %s is not available in this session (its server did not start, or no longer offers it, or offers it only from the next fold of the conversation on); use another tool", call.Name)
	case !ok:
		return b.inner.Run(ctx, call)
	}
	defer func() {
		if p := recover(); p != nil {
			res = failf("the %s tool failed on an internal error (%v); this is a bug in Reika, not in your call: try another way", call.Name, p)
		}
	}()
	if tools.RunMode(ctx) == tools.Plan {
		return failf("%s: plan mode: MCP tools do not run in a plan; state the call in the plan", call.Name)
	}
	args, err := objectArgs(call.Arguments)
	if err != nil {
		return failf("the arguments of %s are not a JSON object (%v); send them as an object that fits its schema", call.Name, err)
	}
	if refused := b.ask(ctx, call.Name, r, args); refused != nil {
		return *refused
	}
	ctx, cancel := context.WithTimeout(ctx, b.cfg.CallTimeout)
	defer cancel()
	out, err := r.srv.call(ctx, r.name, args)
	if err != nil {
		return b.failure(ctx, call.Name, r, err)
	}
	res = tools.Result{Content: resultText(out), Error: out.IsError, Payload: contextwin.Payload{Kind: contextwin.Fetch, Path: call.Name}}
	if r.srv.changed.Load() && !r.srv.told.Swap(true) {
		res.Content += fmt.Sprintf("\n[the MCP server %s announced that its tools changed; the new list takes effect at the next fold of the conversation (when older turns are recapped), not before]", r.srv.spec.Name)
	}
	if b.cfg.Spill != nil {
		res = b.cfg.Spill(call.Name, res)
	}
	return res
}

// failure is the result of a call that got no answer.
func (b *Toolbox) failure(ctx context.Context, name string, r remote, err error) tools.Result {
	var down errDown
	switch {
	case errors.As(err, &down):
		return failf("%s: the MCP server %s is not running: %v; do not call its tools again in this session: find another way, or tell the user", name, r.srv.spec.Name, down.err)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return failf("%s: the MCP server %s did not answer within %s; the call may or may not have had its effect", name, r.srv.spec.Name, b.cfg.CallTimeout)
	case ctx.Err() != nil:
		return failf("%s: the call was cancelled", name)
	}
	return failf("%s: the MCP server %s answered with an error: %v", name, r.srv.spec.Name, err)
}

// ask puts the call to the user unless the session or the run allowed
// the tool; it returns the result of a call that does not run.
func (b *Toolbox) ask(ctx context.Context, name string, r remote, args map[string]any) *tools.Result {
	b.mu.Lock()
	// An ask-mode run runs nothing unasked: mcp_allow does not apply there
	// (as bash_allow does not), only what the user allowed in the run.
	always := b.always[name] && tools.RunMode(ctx) != tools.AskAll
	b.mu.Unlock()
	if always || tools.RunAllows(ctx, name) {
		return nil
	}
	// The arguments whole, on one line: JSON escapes what a line could
	// hide (front ends show the rest with tools.Visible).
	var detail bytes.Buffer
	enc := json.NewEncoder(&detail)
	enc.SetEscapeHTML(false)
	enc.Encode(args)
	q := tools.Question{
		Kind:    tools.AskMCP,
		Subject: r.srv.spec.Name + " " + r.name,
		Why:     fmt.Sprintf("the MCP server %s runs outside the sandbox with your environment, and its tool %s may change things or reach the network", r.srv.spec.Name, r.name),
		Label:   "MCP tool",
		Detail:  strings.TrimSpace(detail.String()),
		Answers: []tools.Answer{tools.Once, tools.ThisRun},
	}
	if b.cfg.Remember != nil {
		q.Answers = append(q.Answers, tools.Always)
	}
	answer := tools.Unasked
	if b.cfg.Ask != nil {
		answer = b.cfg.Ask(ctx, q)
	}
	switch answer {
	case tools.Once:
		return nil
	case tools.ThisRun:
		tools.RunAllow(ctx, name)
		return nil
	case tools.Always:
		if b.cfg.Remember == nil || b.cfg.Remember(name) != nil {
			// The yes stands for this run; only keeping it failed.
			tools.RunAllow(ctx, name)
			return nil
		}
		b.mu.Lock()
		b.always[name] = true
		b.mu.Unlock()
		return nil
	case tools.Deny:
		res := failf("%s: the user declined this call; do not call it again: find another way, or ask the user", name)
		return &res
	}
	why := "the user cannot be asked here"
	if b.cfg.Unasked != nil {
		why = b.cfg.Unasked(q)
	}
	res := failf("%s was not called: it needs the user's confirmation, and %s", name, why)
	return &res
}

// resultText is what the model reads of a result: its text parts joined,
// the others named by their type and size; structured content alone is
// its JSON.
func resultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link %s]", c.URI))
		case *sdk.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s, %s, %d bytes]", c.Resource.URI, c.Resource.MIMEType, len(c.Resource.Blob)))
			}
		default:
			b, _ := c.MarshalJSON()
			parts = append(parts, fmt.Sprintf("[%T, %d bytes]", c, len(b)))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		parts = append(parts, string(b))
	}
	text := strings.Join(parts, "\n")
	if len(text) > maxResult {
		text = strings.ToValidUTF8(text[:maxResult], "") + fmt.Sprintf("\n[cut at %d bytes of %d]", maxResult, len(text))
	}
	if text == "" {
		return "(no output)"
	}
	return text
}

// maxResult bounds what a result's text keeps before it is spilled.
const maxResult = 4 << 20

// objectArgs decodes the arguments, which must be a JSON object; none is
// an empty one, and an object sent as a JSON string is unwrapped.
func objectArgs(s string) (map[string]any, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return map[string]any{}, nil
	}
	if s[0] == '"' {
		var inner string
		if err := json.Unmarshal([]byte(s), &inner); err == nil {
			s = strings.TrimSpace(inner)
		}
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("got null")
	}
	return m, nil
}

func failf(format string, args ...any) tools.Result {
	return tools.Result{Error: true, Content: fmt.Sprintf(format, args...)}
}
