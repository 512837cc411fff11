package contextwin

import (
	"fmt"
	"strings"
	"testing"
)

// thinkingTurns appends, after a user message each, turns of rounds of a
// model that reasons before each call, and plans and sends after each
// round; every turn but the last ends with an answer. It returns the last
// plan.
func thinkingTurns(b *build, turns, rounds int) Plan {
	var p Plan
	for t := range turns {
		if t > 0 {
			b.s.Append(Message{Role: Assistant, Content: "It returns ErrMissing.", Reasoning: fmt.Sprintf("turn %d answer: ", t-1) + text(300, t)})
		}
		b.user(fmt.Sprintf("Question %d: what does the loader return?", t+1))
		for r := range rounds {
			id := fmt.Sprintf("t%dr%d", t, r)
			b.s.Append(Message{Role: Assistant, Content: "next", Reasoning: fmt.Sprintf("turn %d round %d: ", t, r) + text(400, t*10+r),
				ToolCalls: []ToolCall{{ID: id, Name: "read", Arguments: `{"path":"f.go"}`}}})
			b.s.Append(Message{Role: Tool, ToolCallID: id, Content: text(300, r), Payload: Payload{Kind: Read, Path: "f.go"}})
			p = b.send()
		}
	}
	return p
}

// reasoningOf lists the reasoning a request carries, by the turn and
// round that wrote it.
func reasoningOf(msgs []Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Reasoning != "" {
			out = append(out, strings.SplitN(m.Reasoning, ":", 2)[0])
		}
	}
	return out
}

// A request carries the reasoning its engine's template renders, and the
// view's size counts it only then: none on a template that drops it, the
// current turn's (after the last user message) from its carryRounds-th
// reply on a turn template, all of it on one that preserves it or one
// nobody described.
func TestReasoningByTemplate(t *testing.T) {
	const rounds = carryRounds + 1
	var all, turn []string
	for tn := range 2 {
		for r := range rounds {
			all = append(all, fmt.Sprintf("turn %d round %d", tn, r))
			if tn == 1 && r >= carryRounds-1 {
				turn = append(turn, fmt.Sprintf("turn %d round %d", tn, r))
			}
		}
		if tn == 0 {
			all = append(all, "turn 0 answer")
		}
	}
	tests := []struct {
		tmpl ReasoningTemplate
		want []string
	}{
		{ReasoningDrop, nil},
		{ReasoningTurn, turn},
		{ReasoningAll, all},
		{ReasoningUnknown, all},
	}
	for _, tt := range tests {
		t.Run(string(tt.tmpl), func(t *testing.T) {
			b := newBuild(Config{Window: 64000, PrefixChars: 2000, Reasoning: tt.tmpl})
			p := thinkingTurns(b, 2, rounds)
			if p.Event != Append {
				t.Fatalf("last plan = %s, want append (the window is large)", p.Event)
			}
			if got := reasoningOf(p.Messages); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("request carries reasoning of %q, want %q", got, tt.want)
			}
			size := 0
			for _, m := range p.Messages {
				size += sizeOf(m)
			}
			if got, _ := b.s.counted(); got != size {
				t.Errorf("the planner counts %d bytes, the request holds %d", got, size)
			}
		})
	}
}

// On a turn template every request of a turn is an append of the one
// before, what the user says while the agent works included: it rides the
// tool result before it (Rides), and the turn's reasoning stays from its
// carryRounds-th reply on. A new ask after an answer drops the turn's
// reasoning from the request, where the template drops it from the
// prompt.
func TestReasoningTurnAppends(t *testing.T) {
	b := newBuild(Config{Window: 64000, PrefixChars: 2000, Reasoning: ReasoningTurn})
	thinkingTurns(b, 1, carryRounds-1)
	prev := b.send().Messages
	for r := range 3 {
		b.s.Append(Message{Role: Assistant, Content: "next", Reasoning: "more: " + text(300, r),
			ToolCalls: []ToolCall{{ID: fmt.Sprint("x", r), Name: "read", Arguments: `{}`}}})
		b.s.Append(Message{Role: Tool, ToolCallID: fmt.Sprint("x", r), Content: text(200, r), Payload: Payload{Kind: Read, Path: "g.go"}})
		if r == 1 {
			b.user("Also check the empty file.")
		}
		p := b.send()
		if !isAppend(prev, p.Messages) {
			t.Fatalf("round %d: the request within a turn is no append of the one before", r)
		}
		if last := p.Messages[len(p.Messages)-1]; last.Role == User && !last.Rides {
			t.Errorf("round %d: what the user said after a result does not ride it", r)
		}
		prev = p.Messages
	}
	if got := reasoningOf(prev); len(got) != 3 {
		t.Errorf("the turn's request carries reasoning of %q, want its last 3 replies' (from reply %d)", got, carryRounds)
	}
	b.s.Append(Message{Role: Assistant, Content: "It returns ErrMissing.", Reasoning: "answer: " + text(300, 9)})
	b.user("And for an empty file?")
	p := b.send()
	if got := reasoningOf(p.Messages); len(got) != 0 {
		t.Errorf("after a new ask the request carries reasoning of %q, want none", got)
	}
	if last := p.Messages[len(p.Messages)-1]; last.Rides {
		t.Error("an ask after an answer rides: it is a query of its own")
	}
}

func isAppend(prev, msgs []Message) bool {
	if len(msgs) < len(prev) {
		return false
	}
	for i := range prev {
		if !sameMessage(prev[i], msgs[i]) {
			return false
		}
	}
	return true
}

// On a turn template the note round's question rides at the end of the
// newest result, not in a user message of its own that would drop the
// turn's reasoning: the note request is the last request, the results,
// and the question. Elsewhere it is a user message.
func TestReasoningTurnNote(t *testing.T) {
	for _, tmpl := range []ReasoningTemplate{ReasoningTurn, ReasoningAll} {
		t.Run(string(tmpl), func(t *testing.T) {
			b := newBuild(Config{Window: 12000, PrefixChars: 2000, Reasoning: tmpl})
			b.user("Read every file and say what the loader returns.")
			var prev []Message
			for r := range 400 {
				id := fmt.Sprint("c", r)
				b.s.Append(Message{Role: Assistant, Content: "next", Reasoning: text(500, r),
					ToolCalls: []ToolCall{{ID: id, Name: "read", Arguments: `{}`}}})
				b.s.Append(Message{Role: Tool, ToolCallID: id, Content: body(1500), Payload: Payload{Kind: Read, Path: fmt.Sprintf("f%d.go", r)}})
				p := b.s.Plan()
				if p.Event != Note {
					b.answer(p)
					prev = p.Messages
					continue
				}
				last := p.Messages[len(p.Messages)-1]
				switch {
				case tmpl == ReasoningTurn && (last.Role != Tool || !strings.HasSuffix(last.Content, NoteInstruction)):
					t.Errorf("the note's question is in a %s message, want at the end of the newest result", last.Role)
				case tmpl == ReasoningTurn && !isAppend(prev, p.Messages[:len(p.Messages)-1]):
					t.Errorf("the note request is no append of the last request")
				case tmpl == ReasoningAll && (last.Role != User || last.Content != NoteInstruction):
					t.Errorf("the note's question is %s %.40q, want a user message", last.Role, last.Content)
				}
				return
			}
			t.Fatal("no note round in 400 rounds of 2 KB at 12k")
		})
	}
}

// At a shrink event the reasoning after the first message the event
// changed goes: the engine prefills that part again anyway.
func TestReasoningShedAfterChange(t *testing.T) {
	b := newBuild(Config{Window: 12000, PrefixChars: 2000, Reasoning: ReasoningAll})
	b.user("Read every file and say what the loader returns.")
	var prev []Message
	for r := range 80 {
		id := fmt.Sprint("c", r)
		b.s.Append(Message{Role: Assistant, Content: "next", Reasoning: text(500, r),
			ToolCalls: []ToolCall{{ID: id, Name: "read", Arguments: `{}`}}})
		b.s.Append(Message{Role: Tool, ToolCallID: id, Content: body(1500), Payload: Payload{Kind: Read, Path: fmt.Sprintf("f%d.go", r)}})
		p := b.s.Plan()
		if p.Event == Note {
			b.answer(p)
			b.s.SetNote("loader: returns ErrMissing")
			p = b.s.Plan()
		}
		if p.Event == Append {
			b.answer(p)
			prev = p.Messages
			continue
		}
		k := 0
		for k < len(prev) && k < len(p.Messages) && sameMessage(prev[k], p.Messages[k]) {
			k++
		}
		for i, m := range p.Messages[k:] {
			if m.Reasoning != "" {
				t.Errorf("%s: message %d, after the change at %d, still carries its reasoning", p.Event, k+i, k)
			}
		}
		return
	}
	t.Fatal("no shrink event in 80 rounds of 2 KB at 12k")
}

// A note round on a model that thinks leaves room for its reasoning
// before the note: the room a note needs grows by the longest reasoning
// of the last three replies.
func TestNoteRoomThinking(t *testing.T) {
	b := newBuild(Config{Window: 16000, PrefixChars: 2000})
	b.user("Go.")
	b.call(Read, "a.go", text(500, 1))
	if got := b.s.noteRoom(); got != noteReply {
		t.Errorf("noteRoom without reasoning = %d, want %d", got, noteReply)
	}
	b.s.Append(Message{Role: Assistant, Content: "next", Reasoning: text(4000, 2), ToolCalls: []ToolCall{{ID: "x", Name: "read", Arguments: `{}`}}})
	b.s.Append(Message{Role: Tool, ToolCallID: "x", Content: text(300, 3), Payload: Payload{Kind: Read, Path: "b.go"}})
	if got, least := b.s.noteRoom(), noteReply+b.s.est.Known(4000); got < least {
		t.Errorf("noteRoom after 4000 bytes of reasoning = %d, want at least %d", got, least)
	}
}

// On a turn template the primer a checkpoint request puts after a tool
// result rides it: a user message of its own would drop the turn's
// reasoning from the checkpoint request's prompt.
func TestPrimerRides(t *testing.T) {
	result := []Message{{Role: User, Content: "go"}, {Role: Assistant, Content: "next"}, {Role: Tool, Content: "out"}}
	answer := result[:2]
	for _, tt := range []struct {
		tmpl ReasoningTemplate
		msgs []Message
		want bool
	}{
		{ReasoningTurn, result, true},
		{ReasoningTurn, answer, false},
		{ReasoningAll, result, false},
		{ReasoningUnknown, result, false},
	} {
		s := NewPlanner(Config{Window: 32000, Reasoning: tt.tmpl})
		m := s.primerAfter(tt.msgs)
		if m.Rides != tt.want || m.Content != s.primer().Content || m.Role != User {
			t.Errorf("%s, after a %s: primer rides %v, want %v", tt.tmpl, tt.msgs[len(tt.msgs)-1].Role, m.Rides, tt.want)
		}
	}
}
