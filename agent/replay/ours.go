package replay

import (
	"context"
	"fmt"

	"github.com/reika-lsp/reika/contextwin"
)

// ours is Reika's own context manager: a contextwin.Session with its
// defaults, driven the way the agent drives it — Plan before each request,
// a note round (tool_choice "none") when the plan asks for one, Observe
// after each answer, Overflow and one retry when the engine refuses.
type ours struct {
	setup Setup
	s     *contextwin.Session
}

func newOurs(setup Setup) Strategy {
	return &ours{setup: setup, s: contextwin.NewSession(contextwin.Config{Window: setup.Window, PrefixChars: setup.Prefix.Chars})}
}

func (o *ours) Append(msgs ...contextwin.Message) {
	for _, m := range msgs {
		// The agent saves a long command, search or page to a file the
		// model can page through, and says so in the payload.
		if m.Role == contextwin.Tool && contextwin.ShouldSpill(m.Payload, len(m.Content)) {
			m.Payload.Spill = "/tmp/reika/spill/" + m.ToolCallID + ".txt"
		}
		o.s.Append(m)
	}
}

func (o *ours) Turn(ctx context.Context, m Model) error {
	p := o.s.Plan()
	if p.Event == contextwin.Note {
		note := ""
		resp, err := m.Chat(ctx, o.setup.Prefix.Request(p.Messages, p.MaxTokens, "none"), Call{Side: true, Event: p.Event.String()})
		if err == nil {
			note = resp.Content
		} else if ctx.Err() != nil {
			return err
		}
		o.s.SetNote(note) // a failed note folds without one
		p = o.s.Plan()
	}
	event := p.Event
	if p.TooSmall {
		// The agent stops here and tells the user. The replay goes on as
		// if the user said "continue": the agent plans again and sends.
		// The request carries what the reported plan did (a shed, a
		// fold), so it keeps that plan's event.
		m.Problem(p.Problem)
		if p = o.s.Plan(); p.TooSmall {
			return fmt.Errorf("%w: %s", ErrSkipped, p.Problem)
		}
		if p.Event == contextwin.Append {
			p.Event = event
		}
	}
	resp, err := m.Chat(ctx, o.setup.Prefix.Request(p.Messages, p.MaxTokens, ""), Call{Event: p.Event.String()})
	if e, ok := overflowed(err); ok {
		p = o.s.Overflow(e.PromptTokens, e.Window)
		if p.TooSmall || p.GiveUp {
			m.Problem(p.Problem)
			return fmt.Errorf("%w: %s", ErrSkipped, p.Problem)
		}
		resp, err = m.Chat(ctx, o.setup.Prefix.Request(p.Messages, p.MaxTokens, ""), Call{Event: p.Event.String()})
		if e, ok := overflowed(err); ok {
			p = o.s.Overflow(e.PromptTokens, e.Window) // the one retry is spent: GiveUp
			m.Problem(p.Problem)
			return fmt.Errorf("%w: %s", ErrSkipped, p.Problem)
		}
	}
	if err != nil {
		return err
	}
	o.s.Observe(contextwin.Usage{PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens, FinishReason: resp.FinishReason})
	return nil
}
