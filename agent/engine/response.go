package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// wireChunk is a chat.completion or a chat.completion.chunk as engines
// write it. Every field is optional: forks and versions differ.
type wireChunk struct {
	Model   string       `json:"model"`
	Object  string       `json:"object"`
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
	Timings *Timings     `json:"timings"`
	// Error is an error event or an error body on a 200 answer;
	// Object "error" marks old vLLM's flat shape.
	Error json.RawMessage `json:"error"`
}

type wireChoice struct {
	Index        int          `json:"index"`
	Message      *wireMessage `json:"message"`
	Delta        *wireMessage `json:"delta"`
	FinishReason *string      `json:"finish_reason"`
}

type wireMessage struct {
	Content          flexText       `json:"content"`
	ReasoningContent flexText       `json:"reasoning_content"` // llama.cpp, older vLLM, DeepSeek
	Reasoning        flexText       `json:"reasoning"`         // Ollama, newer vLLM
	ToolCalls        []wireToolCall `json:"tool_calls"`
}

type wireToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string   `json:"name"`
		Arguments flexArgs `json:"arguments"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens *int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func (c *wireChunk) isError() bool {
	return len(c.Error) > 0 && string(c.Error) != "null" || c.Object == "error"
}

// choice returns the first choice (index 0 when several), or nil.
func (c *wireChunk) choice() *wireChoice {
	for i := range c.Choices {
		if c.Choices[i].Index == 0 {
			return &c.Choices[i]
		}
	}
	if len(c.Choices) > 0 {
		return &c.Choices[0]
	}
	return nil
}

// flexText reads a text field that may be a string, null, or a list of
// content parts ({"type":"text","text":…}). Anything else reads as empty.
type flexText string

func (t *flexText) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*t = flexText(s)
		return nil
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(b, &parts) == nil {
		var sb strings.Builder
		for _, p := range parts {
			sb.WriteString(p.Text)
		}
		*t = flexText(sb.String())
		return nil
	}
	*t = ""
	return nil
}

// flexArgs reads tool-call arguments: a JSON string as the protocol says,
// or an object that some engines send instead (kept as its JSON text).
type flexArgs string

func (a *flexArgs) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*a = flexArgs(s)
		return nil
	}
	if string(b) == "null" {
		*a = ""
		return nil
	}
	*a = flexArgs(b)
	return nil
}

// parseCompletion reads a whole, non-streamed answer from its raw body.
func parseCompletion(endpoint, op string, status int, body []byte, onDelta func(Delta)) (*Response, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, &Error{Kind: BadResponse, Endpoint: endpoint, Op: op, Status: status,
			Message: "an empty body instead of a chat completion"}
	}
	var ch wireChunk
	if err := json.Unmarshal(body, &ch); err != nil {
		return nil, &Error{Kind: BadResponse, Endpoint: endpoint, Op: op, Status: status,
			Message: "not a chat completion: " + describeBody(body), Err: err}
	}
	if ch.isError() {
		return nil, classifyInBand(endpoint, op, body)
	}
	c := ch.choice()
	if c == nil || c.Message == nil && c.Delta == nil {
		return nil, &Error{Kind: BadResponse, Endpoint: endpoint, Op: op, Status: status,
			Message: "a chat completion without a message: " + describeBody(body)}
	}
	if c.Message == nil {
		c.Message = c.Delta
	}
	c.Delta, c.Message = c.Message, nil
	a := newAssembler(onDelta)
	a.add(&ch)
	return a.finish(), nil
}

// classifyInBand classifies an error the engine sent inside a 200 answer:
// an error event in a stream, or an error body. The code inside the error,
// when it has one, stands for the HTTP status.
func classifyInBand(endpoint, op string, payload []byte) *Error {
	var v struct {
		Code  json.RawMessage `json:"code"`
		Error struct {
			Code json.RawMessage `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(payload, &v)
	code := 0
	for _, raw := range []json.RawMessage{v.Error.Code, v.Code} {
		var n int
		if json.Unmarshal(raw, &n) == nil && n >= 400 && n < 600 {
			code = n
			break
		}
	}
	status := code
	if status == 0 {
		status = 500 // an engine's error without a code is its own failure
	}
	e := classifyHTTP(endpoint, op, status, payload)
	e.Status = code
	return e
}

// checkToolCalls returns a BadToolCall error naming every call whose
// arguments are not a JSON object, or nil.
func checkToolCalls(endpoint, op string, resp *Response) error {
	var bad []string
	for i, tc := range resp.ToolCalls {
		var obj map[string]json.RawMessage
		err := json.Unmarshal([]byte(tc.Arguments), &obj)
		if err == nil && obj != nil {
			continue
		}
		why := "arguments are not a JSON object"
		var se *json.SyntaxError
		if errors.As(err, &se) {
			why = "arguments are not valid JSON: " + se.Error()
		}
		bad = append(bad, fmt.Sprintf("call %d %s (id %s): %s", i, tc.Name, tc.ID, why))
	}
	if bad == nil {
		return nil
	}
	return &Error{Kind: BadToolCall, Endpoint: endpoint, Op: op, Message: strings.Join(bad, "; ")}
}
