package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// stream runs a streamed chat call. It returns what arrived even when it
// fails part way.
func (c *Client) stream(ctx, callCtx context.Context, cl *call, or openai.ChatCompletionRequest, onDelta func(Delta)) (*Response, error) {
	s, err := c.oc.CreateChatCompletionStream(callCtx, or)
	if err != nil {
		return nil, c.failure(ctx, callCtx, cl, err)
	}
	defer s.Close()
	if cl.diverted {
		// The engine ignored "stream" and sent the whole answer.
		resp, err := parseCompletion(c.opts.BaseURL, opChat, cl.status, cl.body, onDelta)
		if err != nil {
			return nil, err
		}
		return resp, checkToolCalls(c.opts.BaseURL, opChat, resp)
	}
	a := newAssembler(onDelta)
	for {
		raw, err := s.RecvRaw()
		if err == nil && raw != nil {
			var ch wireChunk
			if jerr := json.Unmarshal(raw, &ch); jerr != nil {
				return a.finish(), c.errorf(BadResponse, jerr, "not a stream chunk: %s", oneLine(string(raw)))
			}
			if ch.isError() {
				return a.finish(), classifyInBand(c.opts.BaseURL, opChat, raw)
			}
			a.add(&ch)
			if a.overran(cl.maxTokens) {
				// The engine goes on past max_tokens: stop reading (closing
				// the stream stops it) and take what came as cut by the
				// limit.
				resp := a.finish()
				resp.FinishReason, resp.Overran = "length", true
				return resp, nil
			}
			continue
		}
		// go-openai reads an error event and reports it as an *APIError,
		// or as nothing at all when comment lines preceded it; the
		// wrapper kept its bytes.
		if cl.sse != nil && cl.sse.errLine != nil {
			return a.finish(), classifyInBand(c.opts.BaseURL, opChat, cl.sse.errLine)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if ctx.Err() == nil && context.Cause(callCtx) == nil && a.finishReason != "" {
			break // the answer was complete; only the end of the stream was lost
		}
		if err == nil {
			err = errors.New("the engine sent an error event the client could not read")
		}
		return a.finish(), c.failure(ctx, callCtx, cl, err)
	}
	resp := a.finish()
	if cl.sse == nil {
		return resp, c.errorf(StreamCut, nil, "the stream ended before any answer")
	}
	if !cl.sse.sawDone && a.finishReason == "" {
		if a.chunks == 0 && len(cl.sse.head) > 0 && !strings.Contains(string(cl.sse.head), "data:") {
			return resp, c.errorf(BadResponse, nil, "not an event stream: %s", describeBody(cl.sse.head))
		}
		if a.chunks == 0 {
			return resp, c.errorf(StreamCut, nil, "the stream ended before any answer")
		}
		return resp, c.errorf(StreamCut, nil, "the stream ended without a finish reason or [DONE] (%d chunks received)", a.chunks)
	}
	return resp, checkToolCalls(c.opts.BaseURL, opChat, resp)
}

// assembler builds a Response from chunks, and passes each increment to
// onDelta (when set) as it arrives.
type assembler struct {
	onDelta func(Delta)

	model        string
	finishReason string
	usage        *wireUsage
	timings      *Timings
	chunks       int

	// pieces and size are the chunks that brought generated text (or a
	// call's piece) and their bytes: what the engine generated so far.
	pieces, size int

	content   strings.Builder
	reasoning strings.Builder
	calls     []ToolCall
	args      []*strings.Builder
	byIndex   map[int]int // the engine's tool-call index → position in calls
	last      int         // position of the call that received the last piece
}

func newAssembler(onDelta func(Delta)) *assembler {
	return &assembler{onDelta: onDelta, byIndex: map[int]int{}, last: -1}
}

func (a *assembler) add(ch *wireChunk) {
	a.chunks++
	if ch.Model != "" {
		a.model = ch.Model
	}
	if ch.Usage != nil {
		a.usage = ch.Usage
	}
	if ch.Timings != nil {
		a.timings = ch.Timings
	}
	c := ch.choice() // nil for llama.cpp's and vLLM's final usage chunk
	if c == nil {
		return
	}
	if c.FinishReason != nil && *c.FinishReason != "" {
		a.finishReason = *c.FinishReason
	}
	d := c.Delta
	if d == nil {
		d = c.Message
	}
	if d == nil {
		return
	}
	reasoning := string(d.ReasoningContent)
	if r := string(d.Reasoning); r != "" && r != reasoning {
		reasoning += r
	}
	if d.Content != "" || reasoning != "" || len(d.ToolCalls) > 0 {
		a.pieces++
		a.size += len(d.Content) + len(reasoning)
		for i := range d.ToolCalls {
			a.size += len(d.ToolCalls[i].Function.Arguments)
		}
	}
	if d.Content != "" || reasoning != "" {
		a.content.WriteString(string(d.Content))
		a.reasoning.WriteString(reasoning)
		if a.onDelta != nil {
			a.onDelta(Delta{Content: string(d.Content), Reasoning: reasoning})
		}
	}
	for i := range d.ToolCalls {
		a.addToolCall(&d.ToolCalls[i])
	}
}

// addToolCall files one piece of a tool call. Engines stream a call in
// pieces under one index, the id and name on the first piece only; some
// send each call whole, some without an index, and some reuse index 0 for
// every call while giving each its own id.
func (a *assembler) addToolCall(tc *wireToolCall) {
	name := tc.Function.Name
	// sameCall: the piece does not contradict call p's id or name.
	sameCall := func(p int) bool {
		c := a.calls[p]
		return (tc.ID == "" || c.ID == "" || c.ID == tc.ID) &&
			(name == "" || c.Name == "" || c.Name == name)
	}
	pos := -1
	switch {
	case tc.Index != nil:
		if p, ok := a.byIndex[*tc.Index]; ok && sameCall(p) {
			pos = p
		}
	case tc.ID != "":
		for p := range a.calls {
			if a.calls[p].ID == tc.ID {
				pos = p
				break
			}
		}
	case a.last >= 0 && (name == "" || a.calls[a.last].Name == ""):
		pos = a.last // no index, no id, no new name: the rest of the last call
	}
	if pos < 0 {
		pos = len(a.calls)
		a.calls = append(a.calls, ToolCall{})
		a.args = append(a.args, &strings.Builder{})
	}
	if tc.Index != nil {
		a.byIndex[*tc.Index] = pos
	}
	a.last = pos
	call := &a.calls[pos]
	if call.ID == "" {
		call.ID = tc.ID
	}
	if call.Name == "" {
		call.Name = name // engines that repeat the name on every piece repeat the same one
	}
	a.args[pos].WriteString(string(tc.Function.Arguments))
	if a.onDelta != nil {
		a.onDelta(Delta{ToolCall: &ToolCallDelta{
			Index:     pos,
			ID:        tc.ID,
			Name:      tc.Function.Name,
			Arguments: string(tc.Function.Arguments),
		}})
	}
}

// overran reports whether the engine has generated well past maxTokens
// (0: no limit was sent): more pieces than the limit and a margin, each
// at least a token, or more bytes than any tokenizer makes of them.
func (a *assembler) overran(maxTokens int) bool {
	if maxTokens <= 0 {
		return false
	}
	limit := maxTokens + max(maxTokens/4, 64)
	return a.pieces > limit || a.size > limit*overrunBytesPerToken
}

// overrunBytesPerToken bounds a generated token's bytes on average: text
// and code run at 3-5 bytes a token, and a run of the longest tokens
// (indentation, repeated symbols) stays well under it.
const overrunBytesPerToken = 24

// finish returns the Response assembled so far.
func (a *assembler) finish() *Response {
	r := &Response{
		Model:        a.model,
		Content:      a.content.String(),
		Reasoning:    a.reasoning.String(),
		FinishReason: a.finishReason,
		Usage:        Usage{CachedTokens: -1},
		Timings:      a.timings,
	}
	if u := a.usage; u != nil {
		r.Usage.PromptTokens = u.PromptTokens
		r.Usage.CompletionTokens = u.CompletionTokens
		r.Usage.TotalTokens = u.TotalTokens
		if d := u.PromptTokensDetails; d != nil && d.CachedTokens != nil {
			r.Usage.CachedTokens = *d.CachedTokens
		}
	}
	if r.Usage.CachedTokens < 0 && a.timings != nil {
		r.Usage.CachedTokens = a.timings.CacheN
	}
	for i, tc := range a.calls {
		tc.Arguments = argumentsOrEmpty(a.args[i].String())
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("call_%d", i)
		}
		r.ToolCalls = append(r.ToolCalls, tc)
	}
	return r
}
