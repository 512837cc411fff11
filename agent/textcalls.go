package agent

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/reika-lsp/reika/agent/engine"
)

// Tool calls written as text. An engine whose tool-call parser is off
// (llama-server without --jinja, vLLM without --enable-auto-tool-choice)
// hands the model's calls back as the reply's content, in the format the
// model was trained on. The common ones are read here, so that the run
// goes on instead of taking the call for the answer; the user is told
// once how to turn the engine's parser on.

// textCallFormat names a format textCalls reads, for the warning.
type textCallFormat string

const (
	hermesFormat  textCallFormat = "<tool_call> tags"
	jsonFormat    textCallFormat = "a bare JSON call"
	harmonyFormat textCallFormat = "gpt-oss harmony"
)

var (
	hermesBlock  = regexp.MustCompile(`(?s)<tool_call>\s*(.*?)\s*(?:</tool_call>|$)`)
	xmlFunction  = regexp.MustCompile(`(?s)^<function=([\w.:-]+)>(.*?)(?:</function>|$)`)
	xmlParameter = regexp.MustCompile(`(?s)<parameter=([\w.:-]+)>\n?(.*?)\n?</parameter>`)
	harmonyCall  = regexp.MustCompile(`(?s)(?:<\|start\|>assistant)?(?:<\|channel\|>\w+\s*)?to=functions\.([\w.:-]+)[^<]*(?:<\|constrain\|>\w+)?\s*<\|message\|>(.*?)(?:<\|call\|>|$)`)
	harmonyMark  = regexp.MustCompile(`<\|[a-z_]+\|>`)
	jsonFence    = regexp.MustCompile("(?s)^```(?:json)?\\s*(.*?)\\s*```$")
)

// textCalls reads the tool calls a reply wrote as text. It returns them,
// the content without them, and the format; none when the reply holds no
// call in a known format or names a tool that is not the session's
// (known), so that a reply that only talks about a call stays an answer.
func textCalls(content string, known func(string) bool) (calls []engine.ToolCall, rest string, format textCallFormat) {
	switch {
	case strings.Contains(content, "<tool_call>"):
		calls, rest, format = hermesCalls(content), hermesBlock.ReplaceAllString(content, ""), hermesFormat
	case strings.Contains(content, "to=functions."):
		calls, format = harmonyCalls(content), harmonyFormat
		rest = harmonyMark.ReplaceAllString(harmonyCall.ReplaceAllString(content, ""), "")
	default:
		calls, format = jsonCalls(content), jsonFormat
	}
	if len(calls) == 0 {
		return nil, content, ""
	}
	for i := range calls {
		if !known(calls[i].Name) {
			return nil, content, ""
		}
	}
	return calls, strings.TrimSpace(rest), format
}

// hermesCalls reads <tool_call> blocks: a JSON call each (Hermes, Qwen),
// or Qwen3-Coder's <function=name><parameter=key>value</parameter>.
func hermesCalls(content string) []engine.ToolCall {
	var out []engine.ToolCall
	for _, m := range hermesBlock.FindAllStringSubmatch(content, -1) {
		body := strings.TrimSpace(m[1])
		if f := xmlFunction.FindStringSubmatch(body); f != nil {
			args := map[string]any{}
			for _, p := range xmlParameter.FindAllStringSubmatch(f[2], -1) {
				args[p[1]] = parameterValue(p[2])
			}
			b, _ := json.Marshal(args)
			out = append(out, engine.ToolCall{Name: f[1], Arguments: string(b)})
			continue
		}
		c, ok := jsonCall(body)
		if !ok {
			return nil
		}
		out = append(out, c)
	}
	return out
}

// parameterValue is an XML parameter's value: JSON when it reads as JSON
// (a number, a list), else the text itself.
func parameterValue(s string) any {
	var v any
	if t := strings.TrimSpace(s); t != "" && (t[0] == '{' || t[0] == '[' || t == "true" || t == "false" || (t[0] >= '0' && t[0] <= '9')) {
		if json.Unmarshal([]byte(t), &v) == nil {
			return v
		}
	}
	return s
}

// harmonyCalls reads gpt-oss's calls: "to=functions.NAME … <|message|>
// {args}<|call|>".
func harmonyCalls(content string) []engine.ToolCall {
	var out []engine.ToolCall
	for _, m := range harmonyCall.FindAllStringSubmatch(content, -1) {
		args := strings.TrimSpace(m[2])
		if !json.Valid([]byte(args)) {
			return nil
		}
		out = append(out, engine.ToolCall{Name: m[1], Arguments: args})
	}
	return out
}

// jsonCalls reads a reply that is nothing but a JSON call, or a list of
// them, fenced or not.
func jsonCalls(content string) []engine.ToolCall {
	t := strings.TrimSpace(content)
	if m := jsonFence.FindStringSubmatch(t); m != nil {
		t = m[1]
	}
	if strings.HasPrefix(t, "[") {
		var list []json.RawMessage
		if json.Unmarshal([]byte(t), &list) != nil {
			return nil
		}
		var out []engine.ToolCall
		for _, raw := range list {
			c, ok := jsonCall(string(raw))
			if !ok {
				return nil
			}
			out = append(out, c)
		}
		return out
	}
	if c, ok := jsonCall(t); ok {
		return []engine.ToolCall{c}
	}
	return nil
}

// jsonCall reads one call: {"name": …, "arguments": {…}} ("parameters"
// for some models; arguments as an object or as a JSON string).
func jsonCall(s string) (engine.ToolCall, bool) {
	var c struct {
		Name       string          `json:"name"`
		Arguments  json.RawMessage `json:"arguments"`
		Parameters json.RawMessage `json:"parameters"`
	}
	dec := json.NewDecoder(strings.NewReader(s))
	if dec.Decode(&c) != nil || c.Name == "" || dec.More() {
		return engine.ToolCall{}, false
	}
	args := c.Arguments
	if len(args) == 0 {
		args = c.Parameters
	}
	var str string
	if json.Unmarshal(args, &str) == nil {
		args = json.RawMessage(str)
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if !json.Valid(args) || args[0] != '{' {
		return engine.ToolCall{}, false
	}
	return engine.ToolCall{Name: c.Name, Arguments: string(args)}, true
}

// textCallsWarning is told once a session, when a reply's calls came as
// text.
func textCallsWarning(f textCallFormat) string {
	return fmt.Sprintf("the engine sent the model's tool calls as text (%s), not as tool calls: its tool-call parser is off. "+
		"Reika read and ran them, but a parser on the engine's side is more reliable: start llama-server with --jinja, "+
		"vLLM with --enable-auto-tool-choice and the model's --tool-call-parser", f)
}

// TextCallFormat names the format in which content writes a call of the
// tool name as text ("<tool_call> tags", "a bare JSON call", "gpt-oss
// harmony"), "" when it writes none: check's test of the engine's
// tool-call parser.
func TextCallFormat(content, name string) string {
	_, _, f := textCalls(content, func(n string) bool { return n == name })
	return string(f)
}
