package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Turn is one scripted reply. A script is a JSON array of turns, or JSONL
// (one turn per line):
//
//	[
//	  {"reasoning": "Look first.", "tool_calls": [{"name": "read", "arguments": {"path": "main.go"}}]},
//	  {"content": "It returns an error.", "fault": {"latency": "200ms"}}
//	]
//
// Turns are consumed one per chat request, in order, except that a request
// that may not call tools (tool_choice "none", or no tools) when the next
// turn has tool calls gets a note instead and leaves the turn for the next
// request. A request the engine refuses (context overflow, an injected
// fault) consumes nothing. When the script runs out the built-in policy
// answers (if the server has a Root), else a short final answer.
type Turn struct {
	Content   string       `json:"content,omitempty"`
	Reasoning string       `json:"reasoning,omitempty"`
	ToolCalls []ScriptCall `json:"tool_calls,omitempty"`
	// FinishReason overrides the finish reason ("stop", "tool_calls",
	// "length") of a reply that was not cut by the window or max_tokens.
	FinishReason string `json:"finish_reason,omitempty"`
	// Fault applies to the request that consumes this turn; a failing fault
	// (a status or an HTML page) takes the place of the reply.
	Fault *Fault `json:"fault,omitempty"`
}

// ScriptCall is a scripted tool call. Arguments is a JSON object, or a JSON
// string holding the raw argument text (which may be deliberately invalid).
type ScriptCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// ArgumentsText is the argument text the reply carries.
func (c ScriptCall) ArgumentsText() string {
	raw := bytes.TrimSpace(c.Arguments)
	if len(raw) == 0 {
		return "{}"
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// LoadScript reads a script file (JSON array or JSONL).
func LoadScript(path string) ([]Turn, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read script: %w", err)
	}
	turns, err := ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("script %s: %w", path, err)
	}
	return turns, nil
}

// ParseScript decodes a script: a JSON array of turns, or JSONL with one
// turn per line (blank lines are skipped).
func ParseScript(data []byte) ([]Turn, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, nil
	}
	if trimmed[0] == '[' {
		var turns []Turn
		if err := strictDecode(trimmed, &turns); err != nil {
			return nil, err
		}
		return turns, checkTurns(turns, 0)
	}
	var turns []Turn
	sc := bufio.NewScanner(bytes.NewReader(trimmed))
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var t Turn
		if err := strictDecode([]byte(text), &t); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if err := checkTurns([]Turn{t}, line-1); err != nil {
			return nil, err
		}
		turns = append(turns, t)
	}
	return turns, sc.Err()
}

func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

func checkTurns(turns []Turn, offset int) error {
	for i, t := range turns {
		for j, c := range t.ToolCalls {
			if c.Name == "" {
				return fmt.Errorf("turn %d: tool call %d has no name", offset+i+1, j+1)
			}
		}
		switch t.FinishReason {
		case "", "stop", "tool_calls", "length":
		default:
			return fmt.Errorf("turn %d: finish_reason %q: want stop, tool_calls or length", offset+i+1, t.FinishReason)
		}
	}
	return nil
}
