package sim

import (
	"fmt"
	"hash/fnv"
	"strings"
)

// reply is what the "model" means to say, before the window or max_tokens
// cut it.
type reply struct {
	Content      string
	Reasoning    string
	ToolCalls    []toolCall
	FinishReason string // a scripted override, or ""
	Source       string // "script", "policy", "schema", "note" or "final"
}

// generation is a reply as generated: the tokens the model produced (in
// the raw form the template renders, reasoning first) and the parts that
// made it within the limit.
type generation struct {
	Content   string
	Reasoning string
	ToolCalls []toolCall
	Tokens    []string
	Finish    string
	// How Tokens divide: reasoning (with its markers), content, each whole
	// tool call, and the start of a call the limit cut off.
	ReasoningN, ContentN, TailN int
	CallN                       []int
}

// generate produces r token by token, stopping after limit tokens (limit
// < 0: no limit) with finish "length". Tool calls that do not fit whole are
// dropped. malformed cuts tool-call arguments short first.
func generate(r reply, limit int, malformed bool) generation {
	calls := make([]toolCall, len(r.ToolCalls))
	copy(calls, r.ToolCalls)
	if malformed {
		for i := range calls {
			calls[i].Arguments = malformArguments(calls[i].Arguments)
		}
	}
	var g generation
	room := func(n int) int {
		if limit < 0 {
			return n
		}
		return max(0, min(n, limit-len(g.Tokens)))
	}
	cut := false
	if r.Reasoning != "" {
		toks := append(append([]string{"<think>"}, Tokenize(r.Reasoning)...), "</think>")
		n := room(len(toks))
		g.Tokens = append(g.Tokens, toks[:n]...)
		g.ReasoningN = n
		if n < len(toks) {
			cut = true
			n = max(n-1, 0) // the <think> marker is not reasoning text
			g.Reasoning = strings.Join(toks[1:1+n], "")
		} else {
			g.Reasoning = r.Reasoning
		}
	}
	if !cut && r.Content != "" {
		toks := Tokenize(r.Content)
		n := room(len(toks))
		g.Tokens = append(g.Tokens, toks[:n]...)
		g.Content = strings.Join(toks[:n], "")
		g.ContentN = n
		cut = n < len(toks)
	}
	for _, c := range calls {
		if cut {
			break
		}
		toks := Tokenize(renderCall(c))
		n := room(len(toks))
		g.Tokens = append(g.Tokens, toks[:n]...)
		if n < len(toks) {
			cut = true
			g.TailN = n
			break
		}
		g.ToolCalls = append(g.ToolCalls, c)
		g.CallN = append(g.CallN, n)
	}
	switch {
	case cut:
		g.Finish = "length"
	case r.FinishReason != "":
		g.Finish = r.FinishReason
	case len(g.ToolCalls) > 0:
		g.Finish = "tool_calls"
	default:
		g.Finish = "stop"
	}
	return g
}

// takeTurn takes the next turn of script for c: ok is false when the
// script is empty.
func takeTurn(script *[]Turn, c *chat) (r reply, f *Fault, ok bool) {
	if len(*script) == 0 {
		return reply{}, nil, false
	}
	t := (*script)[0]
	if len(t.ToolCalls) > 0 && !c.toolsAllowed() || c.toolChoice == "none" && c.maxTokens == 1 {
		// A turn that calls tools is not for a request that may not;
		// nor is any turn for a checkpoint request (one token, no
		// tools), which only primes the cache: each gets a note and
		// leaves the turn to the next request.
		return noteReply(c), nil, true
	}
	*script = (*script)[1:]
	return turnReply(t, c), t.Fault, true
}

// chooseReply decides what the model says to c: the next script turn, the
// policy, or a final answer. It returns the turn's fault, if any.
func (s *Server) chooseReply(c *chat) (reply, *Fault) {
	if c.scriptKey != "" && s.keyed != nil {
		if r, f, ok := s.keyed.take(c.scriptKey, c); ok {
			return r, f
		}
	}
	s.mu.Lock()
	r, f, ok := takeTurn(&s.script, c)
	s.mu.Unlock()
	if ok {
		return r, f
	}
	if c.toolsAllowed() && !offersPolicyTools(c) {
		if r, ok := schemaReply(c); ok {
			return r, nil
		}
	}
	switch {
	case len(c.tools) == 0:
		return plainReply(c), nil
	case s.policy != nil && offersPolicyTools(c):
		return s.policy.reply(c), nil
	case !c.toolsAllowed():
		return noteReply(c), nil
	}
	return reply{Content: "Done: the task is complete and there is nothing more to do.", Source: "final"}, nil
}

// plainReply answers a chat that offers no tools.
func plainReply(c *chat) reply {
	last := ""
	for _, m := range c.messages {
		if m.Role == "user" {
			last = m.Content
		}
	}
	return reply{
		Content: fmt.Sprintf("This is Reika's simulated engine: there is no model behind it, so this answer is a placeholder. You said: %q.",
			excerpt(last, 120)),
		Source: "final",
	}
}

func turnReply(t Turn, c *chat) reply {
	r := reply{Content: t.Content, Reasoning: t.Reasoning, FinishReason: t.FinishReason, Source: "script"}
	seed := conversationSeed(c)
	round := countAssistant(c) + 1
	for i, sc := range t.ToolCalls {
		r.ToolCalls = append(r.ToolCalls, toolCall{
			ID:        callID(seed, round, i),
			Name:      sc.Name,
			Arguments: sc.ArgumentsText(),
		})
	}
	return r
}

// noteReply is the answer to a request that may not call tools: a note of
// what the conversation has established.
func noteReply(c *chat) reply {
	k := learn(c)
	return reply{Content: k.note(), Source: "note"}
}

// conversationSeed derives a reply's randomness from the task: the first
// user message.
func conversationSeed(c *chat) uint64 {
	h := fnv.New64a()
	for _, m := range c.messages {
		if m.Role == "user" {
			h.Write([]byte(m.Content))
			break
		}
	}
	return h.Sum64()
}

func countAssistant(c *chat) int {
	n := 0
	for _, m := range c.messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// callID names a tool call so that the round it was made in can be read
// back from the conversation ("call_1a2b3c4d_r12_0"), even after old turns
// were folded away.
func callID(seed uint64, round, i int) string {
	return fmt.Sprintf("call_%08x_r%d_%d", uint32(seed), round, i)
}
