package replay

import (
	"encoding/json"
	"strings"

	"github.com/reika-lsp/reika/agent"
	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/sim"
)

// The peers count tokens with the simulated engine's own tokenizer, through
// a mirror of its chat template: every message is a block that starts with
// a special token, so blocks tokenize independently and a prompt's count is
// the sum of its blocks'. No real client has its engine's tokenizer; this
// only flatters the peers (they never overflow by misjudging a count).
// TestTokenMirror holds the mirror to the engine's own prompt_tokens.

// genPrompt is what ends every prompt, "<|assistant|>\n": two tokens.
const genPrompt = 2

// endTokens is what closes a reply the engine generated, "<|end|>\n": the
// engine holds the reply in its cache but not its closing marker.
const endTokens = 2

// blockTokens is one message's share of the prompt.
func blockTokens(m engine.Message) int {
	return sim.CountTokens(blockText(m))
}

// blockText is a message as the template renders it.
func blockText(m engine.Message) string {
	var b strings.Builder
	b.WriteString("<|" + m.Role + "|>\n")
	b.WriteString(m.Content)
	for _, c := range m.ToolCalls {
		b.WriteString(callText(c.Name, c.Arguments))
	}
	b.WriteString("<|end|>\n")
	return b.String()
}

// callText is a tool call as the template renders it and the model
// generates it.
func callText(name, args string) string {
	n, _ := json.Marshal(name)
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	return "<tool_call>\n{\"name\": " + string(n) + ", \"arguments\": " + args + "}\n</tool_call>"
}

// prefixTokens is the fixed prefix's share of every prompt: the BOS token
// and the system block with the tool definitions.
func prefixTokens(p *agent.Prefix) int {
	type function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	type tool struct {
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	body := struct {
		Messages []map[string]string `json:"messages"`
		Tools    []tool              `json:"tools,omitempty"`
	}{Messages: []map[string]string{{"role": "system", "content": p.System}}}
	for _, t := range p.Tools {
		body.Tools = append(body.Tools, tool{Type: "function", Function: function{t.Name, t.Description, t.Parameters}})
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return 0
	}
	n, err := sim.CountPrompt(raw)
	if err != nil {
		return 0
	}
	return n - genPrompt
}
