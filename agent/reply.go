package agent

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/reika-lsp/reika/agent/engine"
)

// What a reply may bring into the session. No reply can end it: a reply
// the history keeps is the next request's, and one larger than the window
// would leave every later request over it. So before a reply enters the
// history its calls are read (the ones written as text too), bounded in
// number, and what is too large for the window is cut, head and tail with
// a note; what the user reads (the answer, the streamed text) is whole.

// maxCallsPerReply is how many tool calls of one reply run; the rest are
// refused with a reason, and the model calls them again.
const maxCallsPerReply = 16

// noWindowReplyBytes bounds a reply's parts when the window is not known.
const noWindowReplyBytes = 256 << 10

// screened is what screening a reply decided: the calls it refused, by
// id, with the reason the model is told, the warnings for the user, and
// the answer as the user reads it (whole, before any cut).
type screened struct {
	refused  map[string]string
	warnings []string
	answer   string
}

// screen makes resp fit the session's history: it reads tool calls
// written as text, refuses the calls past maxCallsPerReply and those
// whose arguments pass what the calls before them left of the reply's
// budget (replyLimit, shared by its calls), and cuts content, reasoning
// and the refused calls' arguments to what it can. The caller holds no lock.
func (r *run) screen(resp *engine.Response) screened {
	s := r.s
	out := screened{refused: map[string]string{}}
	if len(resp.ToolCalls) == 0 {
		if calls, rest, f := textCalls(resp.Content, s.isTool); len(calls) > 0 {
			for i := range calls {
				calls[i].ID = fmt.Sprintf("call_text_%d_%d", r.rounds, i)
			}
			resp.ToolCalls, resp.Content = calls, rest
			s.mu.Lock()
			if !s.toldTextCalls {
				s.toldTextCalls = true
				out.warnings = append(out.warnings, textCallsWarning(f))
			}
			s.mu.Unlock()
		}
	}
	out.answer = resp.Content
	limit := s.replyLimit()
	if n := len(resp.ToolCalls); n > maxCallsPerReply {
		for _, c := range resp.ToolCalls[maxCallsPerReply:] {
			out.refused[c.ID] = fmt.Sprintf("not run: the reply made %d tool calls, and Reika runs at most %d of one reply; call it again", n, maxCallsPerReply)
		}
		out.warnings = append(out.warnings, fmt.Sprintf("the model made %d tool calls in one reply: the first %d ran, the rest were refused", n, maxCallsPerReply))
	}
	// The calls' arguments share one budget, the reply limit: a call runs
	// while its arguments fit what the calls before it left of it.
	left := limit
	for i := range resp.ToolCalls {
		c := &resp.ToolCalls[i]
		_, refused := out.refused[c.ID]
		if !refused && len(c.Arguments) <= left {
			left -= len(c.Arguments)
			continue
		}
		if !refused {
			out.refused[c.ID] = argumentsRefusal(len(c.Arguments), left, limit, s.Budget().Window)
		}
		if len(c.Arguments) > limit/4 {
			c.Arguments = cutArguments(c.Arguments, limit/4)
		}
	}
	if len(resp.Content) > limit {
		resp.Content = cutMiddle(resp.Content, limit, "the rest of this reply")
	}
	if len(resp.Reasoning) > limit/4 {
		resp.Reasoning = cutMiddle(resp.Reasoning, limit/4, "the rest of this reasoning")
	}
	return out
}

// argumentsRefusal is what a call is told whose arguments, n bytes, are
// more than the left bytes the calls before it left of the reply's budget
// of limit bytes, in a window of so many tokens (0 when not known).
func argumentsRefusal(n, left, limit, window int) string {
	in := ""
	if window > 0 {
		in = fmt.Sprintf(" in this %d-token window (a quarter of the room it leaves the conversation)", window)
	}
	if left < limit && n <= limit {
		return fmt.Sprintf("not run: its arguments are %d bytes, and the calls before it in the reply took %d of the %d bytes one reply's calls may carry%s; call it again in a reply of its own",
			n, limit-left, limit, in)
	}
	return fmt.Sprintf("not run: its arguments are %d bytes, more than the %d bytes one reply's calls may carry%s; do it in smaller parts",
		n, limit, in)
}

// replyLimit is the most bytes of a reply's text the history takes: what
// a quarter of the usable window holds, priced cautiously.
func (s *Session) replyLimit() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.cw.Budget().Usable
	if u <= 0 {
		return noWindowReplyBytes
	}
	return max(s.cw.Estimator().NewChars(u/4), 1024)
}

// isTool reports whether name is one of the session's tools.
func (s *Session) isTool(name string) bool {
	for _, t := range s.tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// cutMiddle keeps the head and tail of text within limit bytes, with a
// line saying how much was cut between them.
func cutMiddle(text string, limit int, what string) string {
	note := fmt.Sprintf("\n[… %d bytes of %s cut by Reika: too large for the context window …]\n", len(text)-limit, what)
	keep := max(limit-len(note), 0)
	head, tail := keep*2/3, keep-keep*2/3
	return text[:runeStart(text, head)] + note + text[runeStart(text, len(text)-tail):]
}

// runeStart moves i back to the start of the character it falls in.
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && s[i]&0xC0 == 0x80 {
		i--
	}
	return i
}

// cutArguments cuts a call's JSON arguments to about limit bytes and keeps
// them JSON (an engine's template parses them): the longest string values
// are cut in the middle. Arguments that are not a JSON object become a
// note.
func cutArguments(args string, limit int) string {
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) != nil {
		b, _ := json.Marshal(map[string]string{"cut": fmt.Sprintf("%d bytes of arguments, not JSON, cut by Reika", len(args))})
		return string(b)
	}
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if _, ok := v.(string); ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return len(m[keys[i]].(string)) > len(m[keys[j]].(string)) })
	for _, k := range keys {
		b, _ := json.Marshal(m)
		over := len(b) - limit
		if over <= 0 {
			break
		}
		v := m[k].(string)
		m[k] = cutMiddle(v, max(len(v)-over-128, 256), "this value")
	}
	b, _ := json.Marshal(m)
	return string(b)
}
