// Package agenttest provides fakes for testing code that drives the agent:
// a toolbox whose tools answer from a function. Tests only.
package agenttest

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/tools"
)

// Toolbox offers the named tools with a small schema and answers every
// call with Answer (a fixed text when nil). It records the calls.
type Toolbox struct {
	Names  []string
	Answer func(call engine.ToolCall) tools.Result

	mu    sync.Mutex
	calls []engine.ToolCall
}

// Definitions offers each name with a {"path": string} schema.
func (t *Toolbox) Definitions() []engine.Tool {
	var out []engine.Tool
	for _, n := range t.Names {
		out = append(out, engine.Tool{Name: n, Description: "the " + n + " tool",
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)})
	}
	return out
}

// Run records the call and answers it.
func (t *Toolbox) Run(ctx context.Context, call engine.ToolCall) tools.Result {
	t.mu.Lock()
	t.calls = append(t.calls, call)
	t.mu.Unlock()
	if t.Answer != nil {
		return t.Answer(call)
	}
	return tools.Result{Content: "ok"}
}

// Calls returns the calls so far.
func (t *Toolbox) Calls() []engine.ToolCall {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]engine.ToolCall(nil), t.calls...)
}
