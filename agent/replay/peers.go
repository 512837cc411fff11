package replay

import (
	"context"
	"fmt"
	"strings"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/contextwin"
)

// The peers: what other coding agents do with a full window. Their tool
// results arrive capped, as every strategy's do (see Cut in runner.go), and
// they count tokens exactly (see tokens.go).

// item is one message of a peer's conversation as it is sent.
type item struct {
	raw    contextwin.Message
	msg    engine.Message
	tokens int
}

func newItem(raw contextwin.Message, content string) item {
	msg := toEngine(raw)
	msg.Content = content
	return item{raw: raw, msg: msg, tokens: blockTokens(msg)}
}

// group is a user message, or a model reply with its results (after the
// user message that asked for it, if any): the unit a peer drops, so that
// no result is ever parted from its call.
type group struct {
	items  []item
	tokens int
}

// convo is a peer's conversation: the first user message, pinned, then
// groups.
type convo struct {
	setup  Setup
	prefix int // the prefix's tokens
	first  *item
	groups []group
}

func newConvo(setup Setup) convo {
	return convo{setup: setup, prefix: prefixTokens(setup.Prefix)}
}

// add appends messages.
func (c *convo) add(msgs ...contextwin.Message) {
	for _, m := range msgs {
		it := newItem(m, m.Content)
		switch {
		case c.first == nil && m.Role == contextwin.User:
			c.first = &it
			continue
		case m.Role == contextwin.User,
			m.Role == contextwin.Assistant && !c.lastIsUserOnly(),
			len(c.groups) == 0:
			c.groups = append(c.groups, group{})
		}
		g := &c.groups[len(c.groups)-1]
		g.items = append(g.items, it)
		g.tokens += it.tokens
	}
}

func (c *convo) lastIsUserOnly() bool {
	if len(c.groups) == 0 {
		return false
	}
	g := c.groups[len(c.groups)-1]
	return len(g.items) == 1 && g.items[0].raw.Role == contextwin.User
}

// fixed is what every request carries: the prefix, the first user message
// and the generation prompt.
func (c *convo) fixed() int {
	n := c.prefix + genPrompt
	if c.first != nil {
		n += c.first.tokens
	}
	return n
}

// tokens is the prompt size of the groups from index from on.
func (c *convo) tokens(from int) int {
	n := c.fixed()
	for _, g := range c.groups[from:] {
		n += g.tokens
	}
	return n
}

// request builds the request of the groups from index from on, with extra
// messages after them.
func (c *convo) request(from int, toolChoice string, extra ...engine.Message) engine.Request {
	msgs := []engine.Message{{Role: "system", Content: c.setup.Prefix.System}}
	if c.first != nil {
		msgs = append(msgs, c.first.msg)
	}
	for _, g := range c.groups[from:] {
		for _, it := range g.items {
			msgs = append(msgs, it.msg)
		}
	}
	msgs = append(msgs, extra...)
	return engine.Request{Messages: msgs, Tools: c.setup.Prefix.Tools, ToolChoice: toolChoice}
}

// sliding is the drop-oldest window most tools have: the newest whole
// groups that fit in W − reserve, after the system prompt and the first
// user message. A group once dropped stays dropped. A refusal (only a
// newest group that fits nowhere can cause one) drops one more group and
// retries; with nothing left to drop the turn is skipped.
type sliding struct {
	c     convo
	start int
}

// sendDropping sends the conversation from round *start on, dropping the
// oldest rounds first while it does not fit the usable window, then while
// the engine refuses it as too long.
func (c *convo) sendDropping(ctx context.Context, m Model, start *int, event string) error {
	for *start < len(c.groups)-1 && c.tokens(*start) > c.setup.Usable() {
		*start++
		event = "drop"
	}
	for {
		_, err := m.Chat(ctx, c.request(*start, ""), Call{Event: event})
		if _, ok := overflowed(err); !ok {
			return err
		}
		if *start >= len(c.groups)-1 {
			return fmt.Errorf("%w: the newest round alone does not fit the window", ErrSkipped)
		}
		*start++
		event = "drop"
	}
}

func newSliding(setup Setup) Strategy { return &sliding{c: newConvo(setup)} }

func (s *sliding) Append(msgs ...contextwin.Message) { s.c.add(msgs...) }

func (s *sliding) Turn(ctx context.Context, m Model) error {
	event := "append"
	return s.c.sendDropping(ctx, m, &s.start, event)
}

// Summarize-when-full, as Claude Code and Codex compact: when the prompt
// passes 90% of usable, one call with tools forbidden asks for a summary;
// the history restarts as [system, first user message, summary] and grows
// again.
type summarize struct {
	c convo
}

// summarizeAt is the share of usable past which the history is summarized.
const summarizeAt = 0.9

// SummaryInstruction is the summarize strategy's request.
const SummaryInstruction = "Your task is to create a detailed summary of the conversation so far, paying close attention to " +
	"the user's explicit requests and your previous actions. Include the files and functions involved, the errors found " +
	"and how they were fixed, the exact values the task depends on, what is pending and what you were doing last. " +
	"Do not call tools."

// summaryLead opens the message that carries the summary.
const summaryLead = "This session is being continued from a previous conversation that ran out of context. " +
	"The conversation is summarized below:\n\n"

func newSummarize(setup Setup) Strategy { return &summarize{c: newConvo(setup)} }

func (s *summarize) Append(msgs ...contextwin.Message) { s.c.add(msgs...) }

func (s *summarize) Turn(ctx context.Context, m Model) error {
	event := "append"
	if float64(s.c.tokens(0)) > summarizeAt*float64(s.c.setup.Usable()) {
		if err := s.compact(ctx, m); err != nil {
			return err
		}
		event = "summary"
	}
	_, err := m.Chat(ctx, s.c.request(0, ""), Call{Event: event})
	if _, ok := overflowed(err); ok {
		if err := s.compact(ctx, m); err != nil {
			return err
		}
		_, err = m.Chat(ctx, s.c.request(0, ""), Call{Event: "summary"})
		if _, ok := overflowed(err); ok {
			return fmt.Errorf("%w: refused again after a summary", ErrSkipped)
		}
	}
	return err
}

// compact summarizes the history and restarts it. The summary call sees
// as much of the history as fits, oldest groups left out first.
func (s *summarize) compact(ctx context.Context, m Model) error {
	ask := engine.Message{Role: "user", Content: SummaryInstruction}
	askTokens := blockTokens(ask)
	from := 0
	for from < len(s.c.groups)-1 && s.c.tokens(from)+askTokens > s.c.setup.Usable() {
		from++
	}
	for {
		resp, err := m.Chat(ctx, s.c.request(from, "none", ask), Call{Side: true, Event: "summary"})
		if err == nil {
			s.c.groups = nil
			s.c.add(contextwin.Message{Role: contextwin.User, Content: summaryLead + strings.TrimSpace(resp.Content)})
			return nil
		}
		if _, ok := overflowed(err); !ok || from >= len(s.c.groups)-1 {
			return fmt.Errorf("%w: the summary call failed: %v", ErrSkipped, err)
		}
		from++
	}
}

// mask is SWE-agent's observation masking, which is also what Reika does
// with no known window: every round, the results of rounds older than the
// last maskRounds become their contextwin summaries (a result too small to
// be worth one keeps its bytes). When even that does not fit W − reserve,
// the oldest groups are dropped as by sliding.
type mask struct {
	c      convo
	start  int
	masked int // groups before this are masked
}

const maskRounds = 5

func newMask(setup Setup) Strategy { return &mask{c: newConvo(setup)} }

func (s *mask) Append(msgs ...contextwin.Message) { s.c.add(msgs...) }

func (s *mask) Turn(ctx context.Context, m Model) error {
	event := "append"
	// Rounds are the groups with a model reply; a user message's own group
	// has no results to mask.
	rounds := 0
	upTo := len(s.c.groups)
	for upTo > 0 && rounds < maskRounds {
		upTo--
		if hasReply(s.c.groups[upTo]) {
			rounds++
		}
	}
	for ; s.masked < upTo; s.masked++ {
		g := &s.c.groups[s.masked]
		for i := range g.items {
			it := &g.items[i]
			if it.raw.Role != contextwin.Tool {
				continue
			}
			sum, keep := contextwin.Summarize(it.raw)
			if keep {
				continue
			}
			*it = newItem(it.raw, sum)
			event = "mask"
		}
		g.tokens = 0
		for _, it := range g.items {
			g.tokens += it.tokens
		}
	}
	return s.c.sendDropping(ctx, m, &s.start, event)
}

func hasReply(g group) bool {
	for _, it := range g.items {
		if it.raw.Role == contextwin.Assistant {
			return true
		}
	}
	return false
}
