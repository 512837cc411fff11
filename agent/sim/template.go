package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// chatRequest is the part of an OpenAI chat-completions body the simulator
// reads. Unknown fields are ignored, as the engines do.
type chatRequest struct {
	Model               string            `json:"model"`
	Messages            []json.RawMessage `json:"messages"`
	Tools               []json.RawMessage `json:"tools"`
	ToolChoice          json.RawMessage   `json:"tool_choice"`
	ParallelToolCalls   *bool             `json:"parallel_tool_calls"`
	Stream              bool              `json:"stream"`
	StreamOptions       *streamOptions    `json:"stream_options"`
	MaxTokens           *int              `json:"max_tokens"`
	MaxCompletionTokens *int              `json:"max_completion_tokens"`
	NPredict            *int              `json:"n_predict"`
	IDSlot              *int              `json:"id_slot"`
	CachePrompt         *bool             `json:"cache_prompt"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// message is one decoded chat message.
type message struct {
	Role    string
	Content string
	// Reasoning is what an assistant message sent back as its reasoning
	// (reasoning_content, else reasoning); the template renders it or not
	// (see ReasoningTemplate).
	Reasoning  string
	ToolCalls  []toolCall
	ToolCallID string
}

// toolCall is a function call, in a request's history or in a reply.
type toolCall struct {
	ID        string
	Name      string
	Arguments string // JSON text as the model wrote it
}

// tool is a function offered by the request.
type tool struct {
	Name string
	// Raw is the function object, compacted, as it is rendered into the
	// prompt.
	Raw string
}

// chat is a decoded, validated request.
type chat struct {
	req        chatRequest
	messages   []message
	tools      []tool
	toolChoice string // "auto", "none", "required" or "function:NAME"
	maxTokens  int    // -1 when the request sets none
	// scriptKey names the script the request's reply comes from
	// (ScriptHeader), "" for the server's own.
	scriptKey string
}

// toolsAllowed reports whether the reply may call tools.
func (c *chat) toolsAllowed() bool {
	return len(c.tools) > 0 && c.toolChoice != "none"
}

// offers reports whether the request offers a tool of that name.
func (c *chat) offers(name string) bool {
	for _, t := range c.tools {
		if strings.EqualFold(t.Name, name) {
			return true
		}
	}
	return false
}

// CountPrompt is the number of prompt tokens the simulator counts for a
// chat-completions request body: the figure it reports as prompt_tokens
// (before any Ollama truncation).
func CountPrompt(body []byte) (int, error) {
	c, err := parseChat(body)
	if err != nil {
		return 0, err
	}
	c.keepReasoning(DropReasoning)
	return len(PromptTokens(renderPrompt(c.messages, c.tools))), nil
}

// ReasoningTemplate is what the chat template renders of the reasoning
// that assistant messages carry back.
type ReasoningTemplate string

const (
	// DropReasoning renders none: templates that strip earlier <think>
	// blocks. A reply that reasoned is reused from the cache only up to
	// its reasoning. The default.
	DropReasoning ReasoningTemplate = "drop"
	// TurnReasoning renders the reasoning of the assistant messages after
	// the last user message, the current turn's (interleaved thinking in a
	// tool loop, as Qwen3's and DeepSeek's templates do): a new user
	// message drops the earlier turn's reasoning from the prompt.
	TurnReasoning ReasoningTemplate = "turn"
	// AllReasoning renders every assistant message's reasoning (preserved
	// thinking; llama.cpp's supports_preserve_reasoning).
	AllReasoning ReasoningTemplate = "all"
)

// ParseReasoningTemplate accepts "drop" (or ""), "turn" and "all".
func ParseReasoningTemplate(s string) (ReasoningTemplate, error) {
	switch t := ReasoningTemplate(strings.ToLower(strings.TrimSpace(s))); t {
	case "":
		return DropReasoning, nil
	case DropReasoning, TurnReasoning, AllReasoning:
		return t, nil
	}
	return "", fmt.Errorf("unknown reasoning template %q: want drop, turn or all", s)
}

// keepReasoning clears the reasoning of the messages the template t does
// not render, so that what is left is what the prompt shows.
func (c *chat) keepReasoning(t ReasoningTemplate) {
	from := len(c.messages) // DropReasoning: none kept
	switch t {
	case AllReasoning:
		from = 0
	case TurnReasoning:
		from = 0
		for i, m := range c.messages {
			if m.Role == "user" {
				from = i + 1
			}
		}
	}
	for i := range c.messages[:from] {
		c.messages[i].Reasoning = ""
	}
}

// parseChat decodes and checks a chat-completions body. Its errors are
// meant for the client, in a 400.
func parseChat(body []byte) (*chat, error) {
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("invalid JSON in request body: %v", err)
	}
	if len(req.Messages) == 0 {
		return nil, errors.New("'messages' is required and must be a non-empty array")
	}
	c := &chat{req: req, maxTokens: -1}
	for i, raw := range req.Messages {
		m, err := parseMessage(raw)
		if err != nil {
			return nil, fmt.Errorf("messages[%d]: %v", i, err)
		}
		c.messages = append(c.messages, m)
	}
	for i, raw := range req.Tools {
		t, err := parseTool(raw)
		if err != nil {
			return nil, fmt.Errorf("tools[%d]: %v", i, err)
		}
		c.tools = append(c.tools, t)
	}
	choice, err := parseToolChoice(req.ToolChoice)
	if err != nil {
		return nil, err
	}
	c.toolChoice = choice
	for _, p := range []*int{req.MaxCompletionTokens, req.MaxTokens, req.NPredict} {
		if p != nil && *p >= 0 {
			c.maxTokens = *p
			break
		}
	}
	return c, nil
}

func parseMessage(raw json.RawMessage) (message, error) {
	var m struct {
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		ToolCalls []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
		ToolCallID       string          `json:"tool_call_id"`
		ReasoningContent json.RawMessage `json:"reasoning_content"`
		Reasoning        json.RawMessage `json:"reasoning"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return message{}, fmt.Errorf("not a message object: %v", err)
	}
	switch m.Role {
	case "system", "developer":
		m.Role = "system"
	case "user", "assistant", "tool":
	case "":
		return message{}, errors.New("'role' is required")
	default:
		return message{}, fmt.Errorf("unsupported role %q", m.Role)
	}
	text, err := contentText(m.Content)
	if err != nil {
		return message{}, err
	}
	out := message{Role: m.Role, Content: text, ToolCallID: m.ToolCallID}
	if m.Role == "assistant" {
		raw := m.ReasoningContent
		if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
			raw = m.Reasoning
		}
		if out.Reasoning, err = contentText(raw); err != nil {
			return message{}, errors.New("'reasoning_content' must be a string")
		}
	}
	for _, tc := range m.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, toolCall{
			ID:        tc.ID,
			Name:      tc.Function.Name,
			Arguments: argumentsText(tc.Function.Arguments),
		})
	}
	return out, nil
}

// contentText accepts a string, null, or an array of content parts.
func contentText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("'content' must be a string, null or an array of parts")
	}
	var b strings.Builder
	for _, p := range parts {
		switch p.Type {
		case "text", "input_text", "":
			b.WriteString(p.Text)
		default:
			b.WriteString("<" + p.Type + ">")
		}
	}
	return b.String(), nil
}

// argumentsText turns tool-call arguments into their JSON text: a JSON
// string holds the text; an object (some clients send one) is the text.
func argumentsText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	return string(raw)
}

func parseTool(raw json.RawMessage) (tool, error) {
	var t struct {
		Type     string          `json:"type"`
		Function json.RawMessage `json:"function"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return tool{}, fmt.Errorf("not a tool object: %v", err)
	}
	var fn struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(t.Function, &fn); err != nil || fn.Name == "" {
		return tool{}, errors.New("a tool needs 'function' with a 'name'")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, t.Function); err != nil {
		return tool{}, err
	}
	return tool{Name: fn.Name, Raw: b.String()}, nil
}

func parseToolChoice(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "auto", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		switch s {
		case "auto", "none", "required":
			return s, nil
		}
		return "", fmt.Errorf("invalid tool_choice %q: want \"auto\", \"none\" or \"required\"", s)
	}
	var obj struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil || obj.Function.Name == "" {
		return "", fmt.Errorf("invalid tool_choice %s", raw)
	}
	return "function:" + obj.Function.Name, nil
}

// The chat template is Phi-3-like, extended with tools:
//
//	<|system|>
//	SYSTEM TEXT
//
//	# Tools
//	…one function object per line…<|end|>
//	<|user|>
//	USER TEXT<|end|>
//	<|assistant|>
//	<think>REASONING</think>TEXT<tool_call>
//	{"name": "read", "arguments": {…}}
//	</tool_call><|end|>
//	<|tool|>
//	RESULT<|end|>
//	<|assistant|>
//
// Tools are rendered whatever tool_choice says, as llama.cpp does with a
// template that supports them, so they always count toward the prompt.
// Reasoning is rendered as the server's ReasoningTemplate says: none by
// default, so that replies that reasoned lose their cache from the point
// where the reasoning was; rendered, it is the <think> block the model
// generated, and the whole reply is reused.
const templateSource = `{{- for m in messages }}<|{{ m.role }}|>
{{ think(m.reasoning_content) if kept }}{{ m.content }}{{ tools if first system }}{{ tool_calls }}<|end|>
{{ end }}<|assistant|>
`

// templateText is the template /props shows for a reasoning template t:
// llama.cpp reports supports_preserve_reasoning for a template that reads
// an earlier message's reasoning_content at all, so the text says which of
// them it renders, as Qwen3's says it with last_query_index.
func templateText(t ReasoningTemplate) string {
	switch t {
	case AllReasoning:
		return strings.Replace(templateSource, "if kept", "if m.reasoning_content", 1)
	case TurnReasoning:
		return strings.Replace(templateSource, "if kept", "if loop.index0 > ns.last_query_index", 1)
	}
	return strings.Replace(templateSource, "{{ think(m.reasoning_content) if kept }}", "", 1)
}

const toolsPreamble = "\n\n# Tools\n\nYou may call these functions. To call one, answer with " +
	"<tool_call>{\"name\": NAME, \"arguments\": {…}}</tool_call>.\n<tools>\n"

// generationPrompt ends every prompt: the model answers after it.
const generationPrompt = "<|assistant|>\n"

// renderPrompt renders a conversation into the text the engine tokenizes.
func renderPrompt(msgs []message, tools []tool) string {
	lead, blocks := promptBlocks(msgs, tools)
	return lead + strings.Join(blocks, "") + generationPrompt
}

// prefillPrompt renders a conversation whose last message is the
// assistant's as llama.cpp does unless started with
// --no-prefill-assistant: the messages before it and the generation
// prompt, then that message's text, unclosed — the start of the turn the
// model goes on with. Its reasoning and tool calls are not rendered.
// Another conversation is rendered as renderPrompt does.
func prefillPrompt(msgs []message, tools []tool) string {
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != "assistant" {
		return renderPrompt(msgs, tools)
	}
	return renderPrompt(msgs[:len(msgs)-1], tools) + msgs[len(msgs)-1].Content
}

// promptBlocks renders each message as its own block, and lead, a system
// block that carries the tools when no system message comes first. Each
// block starts with a special token, so blocks tokenize independently.
func promptBlocks(msgs []message, tools []tool) (lead string, blocks []string) {
	toolsText := ""
	if len(tools) > 0 {
		var b strings.Builder
		b.WriteString(toolsPreamble)
		for _, t := range tools {
			b.WriteString(t.Raw)
			b.WriteByte('\n')
		}
		b.WriteString("</tools>")
		toolsText = b.String()
	}
	if toolsText != "" && (len(msgs) == 0 || msgs[0].Role != "system") {
		lead = "<|system|>\nYou are a helpful assistant." + toolsText + "<|end|>\n"
		toolsText = ""
	}
	blocks = make([]string, len(msgs))
	for i, m := range msgs {
		var b strings.Builder
		b.WriteString("<|" + m.Role + "|>\n")
		if m.Role == "assistant" {
			b.WriteString(assistantBody(m.Reasoning, m.Content, m.ToolCalls))
		} else {
			b.WriteString(m.Content)
		}
		if m.Role == "system" && toolsText != "" {
			b.WriteString(toolsText)
			toolsText = ""
		}
		b.WriteString("<|end|>\n")
		blocks[i] = b.String()
	}
	return lead, blocks
}

// assistantBody is an assistant turn as the template renders it, and as the
// model generates it: its reasoning (when the template keeps it), its
// text, then its tool calls.
func assistantBody(reasoning, content string, calls []toolCall) string {
	var b strings.Builder
	if reasoning != "" {
		b.WriteString("<think>" + reasoning + "</think>")
	}
	b.WriteString(content)
	for _, c := range calls {
		b.WriteString(renderCall(c))
	}
	return b.String()
}

func renderCall(c toolCall) string {
	name, _ := json.Marshal(c.Name)
	args := c.Arguments
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	return "<tool_call>\n{\"name\": " + string(name) + ", \"arguments\": " + args + "}\n</tool_call>"
}
