package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	openai "github.com/sashabaranov/go-openai"
)

// emptySchema stands in for a tool without parameters: engines reject
// "parameters": null, and some chat templates iterate over "properties".
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// buildRequest turns a Request into what go-openai sends plus the patch
// that adds what go-openai cannot express. The model, max_tokens and
// temperature travel in the patch, not in go-openai's request: its
// omitempty drops temperature 0, and it refuses max_tokens for model names
// it believes are OpenAI reasoning models, a check that means nothing for a
// local engine.
func buildRequest(opts Options, req Request, stream bool) (openai.ChatCompletionRequest, *bodyPatch, error) {
	p := &bodyPatch{
		defaults: map[string]json.RawMessage{},
		typed:    map[string]json.RawMessage{},
	}
	or := openai.ChatCompletionRequest{Messages: wireMessages(req.Messages, p)}
	tools, err := wireTools(req.Tools)
	if err != nil {
		return or, nil, err
	}
	or.Tools = tools
	switch req.ToolChoice {
	case "":
	case "auto", "none", "required":
		or.ToolChoice = req.ToolChoice
	default:
		return or, nil, fmt.Errorf("tool choice %q: want auto, none or required", req.ToolChoice)
	}
	if stream {
		or.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	if err := p.addFields(opts, req); err != nil {
		return or, nil, err
	}
	for _, i := range p.emptyContent {
		p.roles = append(p.roles, req.Messages[i].Role)
	}
	return or, p, nil
}

// wireMessages converts the messages for go-openai, noting in p those
// whose empty content it would omit.
func wireMessages(msgs []Message, p *bodyPatch) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, len(msgs))
	for i, m := range msgs {
		om := openai.ChatCompletionMessage{
			Role:       m.Role,
			Content:    m.Content,
			ToolCallID: m.ToolCallID,
			// reasoning_content is what llama.cpp's and vLLM's chat
			// templates read back, and what DeepSeek's API requires in a
			// tool loop; empty, it is left out.
			ReasoningContent: m.Reasoning,
		}
		for _, tc := range m.ToolCalls {
			om.ToolCalls = append(om.ToolCalls, openai.ToolCall{
				ID:   tc.ID,
				Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{
					Name:      tc.Name,
					Arguments: argumentsOrEmpty(tc.Arguments),
				},
			})
		}
		if len(m.Images) > 0 {
			// The OpenAI shape every engine that takes images reads:
			// the text, then each image as a data URL.
			om.Content = ""
			if m.Content != "" {
				om.MultiContent = append(om.MultiContent, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: m.Content})
			}
			for _, img := range m.Images {
				om.MultiContent = append(om.MultiContent, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL,
					ImageURL: &openai.ChatMessageImageURL{URL: "data:" + img.MIME + ";base64," + img.Data}})
			}
		}
		// go-openai omits an empty content; llama.cpp refuses a message
		// with neither content nor tool calls (an empty tool result).
		if m.Content == "" && len(om.ToolCalls) == 0 && len(m.Images) == 0 {
			p.emptyContent = append(p.emptyContent, i)
		}
		out[i] = om
	}
	return out
}

// wireTools converts the tool definitions for go-openai; parameters that
// are not JSON are an error, none an empty schema.
func wireTools(tools []Tool) ([]openai.Tool, error) {
	var out []openai.Tool
	for _, t := range tools {
		params := t.Parameters
		if len(bytes.TrimSpace(params)) == 0 {
			params = emptySchema
		} else if !json.Valid(params) {
			return nil, fmt.Errorf("tool %s: parameters are not valid JSON", t.Name)
		}
		out = append(out, openai.Tool{
			Type: openai.ToolTypeFunction,
			Function: &openai.FunctionDefinition{
				Name:        t.Name,
				Description: t.Description,
				Parameters:  params,
			},
		})
	}
	return out, nil
}

// addFields puts in p the body fields go-openai does not send as they
// must be: llama.cpp's cache_prompt and slot, the session's fields
// (Identity.Fields), the extra fields, and the
// model, max_tokens and temperature as given.
func (p *bodyPatch) addFields(opts Options, req Request) error {
	if opts.Flavor == LlamaCpp {
		p.defaults["cache_prompt"] = json.RawMessage("true")
		if req.Slot != nil {
			p.typed["id_slot"], _ = json.Marshal(*req.Slot)
		}
	}
	opts.Identity.addSessionFields(p, req.Session)
	for _, extra := range []map[string]any{opts.Extra, req.Extra} {
		for k, v := range extra {
			b, err := json.Marshal(v)
			if err != nil {
				return fmt.Errorf("extra field %s: %w", k, err)
			}
			p.defaults[k] = b
		}
	}
	switch {
	case req.Model != "":
		p.typed["model"], _ = json.Marshal(req.Model)
	case opts.Model != "":
		p.typed["model"], _ = json.Marshal(opts.Model)
	}
	if req.MaxTokens > 0 {
		p.typed["max_tokens"], _ = json.Marshal(req.MaxTokens)
	}
	if req.Temperature != nil {
		b, err := json.Marshal(*req.Temperature)
		if err != nil {
			return fmt.Errorf("temperature: %w", err)
		}
		p.typed["temperature"] = b
	}
	return nil
}

// argumentsOrEmpty sends "{}" for a call without arguments: llama.cpp
// requires the field, and go-openai omits an empty one.
func argumentsOrEmpty(args string) string {
	if len(bytes.TrimSpace([]byte(args))) == 0 {
		return "{}"
	}
	return args
}

// bodyPatch rewrites the body go-openai marshalled. Precedence, lowest
// first: defaults (cache_prompt for llama.cpp and the session's fields, then Options.Extra, then
// Request.Extra), then the fields go-openai wrote (messages, tools,
// tool_choice, stream, stream_options), then typed (model, max_tokens,
// temperature, id_slot). The top level is written with sorted keys and every value
// keeps its bytes, so equal requests give equal bodies and a request with
// more messages gives a messages array that starts with the same bytes.
type bodyPatch struct {
	defaults map[string]json.RawMessage
	typed    map[string]json.RawMessage
	// emptyContent lists the messages whose content go-openai omitted, and
	// roles their roles, in the same order.
	emptyContent []int
	roles        []string
}

func (p *bodyPatch) apply(body []byte) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, fmt.Errorf("patch request body: %w", err)
	}
	// go-openai always writes "model", empty when unset; ours is in typed.
	delete(top, "model")
	if len(p.emptyContent) > 0 {
		msgs, err := p.addEmptyContent(top["messages"])
		if err != nil {
			return nil, err
		}
		top["messages"] = msgs
	}
	for k, v := range p.defaults {
		if _, ok := top[k]; !ok {
			top[k] = v
		}
	}
	for k, v := range p.typed {
		top[k] = v
	}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b bytes.Buffer
	b.Grow(len(body) + 128)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(top[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// addEmptyContent writes "content":"" right after the role of each message
// go-openai left without content, keeping every other byte.
func (p *bodyPatch) addEmptyContent(raw json.RawMessage) (json.RawMessage, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("patch request messages: %w", err)
	}
	for j, i := range p.emptyContent {
		if i >= len(items) {
			break
		}
		role, _ := json.Marshal(p.roles[j])
		prefix := append([]byte(`{"role":`), role...)
		if !bytes.HasPrefix(items[i], prefix) {
			continue // not go-openai's shape; leave it as it is
		}
		patched := make([]byte, 0, len(items[i])+len(`,"content":""`))
		patched = append(patched, prefix...)
		patched = append(patched, `,"content":""`...)
		patched = append(patched, items[i][len(prefix):]...)
		items[i] = patched
	}
	var b bytes.Buffer
	b.Grow(len(raw) + 16*len(p.emptyContent))
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}
