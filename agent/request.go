package agent

import (
	"encoding/json"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/contextwin"
)

// Prefix is the fixed start of every request of a session: the system
// prompt (with the bootstrap: project instructions, the repo map) and the
// tool definitions. It is built once per session and rebuilt only at a
// shrink event, which pays for a new prefill anyway.
type Prefix struct {
	System string
	Tools  []engine.Tool
	// Chars is its size in bytes as contextwin counts it.
	Chars int
	// Map is the repo map the system prompt carries, "" for none.
	Map string
}

// NewPrefix assembles a prefix.
func NewPrefix(system string, tools []engine.Tool) *Prefix {
	p := &Prefix{System: system, Tools: tools, Chars: len(system)}
	for _, t := range tools {
		p.Chars += len(t.Name) + len(t.Description) + len(t.Parameters) + 32
	}
	return p
}

// Request builds the engine request for the messages a plan gives: the
// system prompt, then the messages, with the prefix's tools.
func (p *Prefix) Request(msgs []contextwin.Message, maxTokens int, toolChoice string) engine.Request {
	out := make([]engine.Message, 0, len(msgs)+1)
	if p.System != "" {
		out = append(out, engine.Message{Role: "system", Content: p.System})
	}
	for _, m := range msgs {
		if n := len(out); m.Rides && n > 0 && out[n-1].Role == string(contextwin.Tool) {
			out[n-1].Content = contextwin.RiddenText(out[n-1].Content, m.Content)
			continue
		}
		out = append(out, toEngine(m))
	}
	return engine.Request{Messages: out, Tools: p.Tools, ToolChoice: toolChoice, MaxTokens: maxTokens}
}

// toEngine converts a message of the view to the engine's type, with the
// reasoning the view carries on it.
func toEngine(m contextwin.Message) engine.Message {
	e := engine.Message{Role: string(m.Role), Content: m.Content, Reasoning: m.Reasoning, ToolCallID: m.ToolCallID}
	for _, img := range m.Images {
		e.Images = append(e.Images, engine.Image{MIME: img.MIME, Data: img.Data})
	}
	for _, c := range m.ToolCalls {
		e.ToolCalls = append(e.ToolCalls, engine.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	return e
}

// Assistant converts the engine's reply to a message of the session,
// without its reasoning: the transcript keeps that (see [Session.record]),
// and the session's message takes it only when it is sent back (see
// sessionConfig.ReasoningBack).
func Assistant(r *engine.Response) contextwin.Message {
	m := contextwin.Message{Role: contextwin.Assistant, Content: r.Content}
	for _, c := range r.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, contextwin.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	return m
}

// promptBytes serializes what the engine renders into its prompt, in the
// order it renders it — tools, then each message — for comparing one
// request with the next. It returns the bytes and where each message
// starts.
func promptBytes(req engine.Request) ([]byte, []int) {
	var b []byte
	tools, _ := json.Marshal(req.Tools)
	b = append(b, tools...)
	starts := make([]int, len(req.Messages))
	for i, m := range req.Messages {
		starts[i] = len(b)
		mb, _ := json.Marshal(m)
		b = append(b, mb...)
	}
	return b, starts
}
