package contextwin

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// lastResult is the newest tool result appended to the planner.
func lastResult(s *Planner) (int, Message) {
	for i := len(s.log) - 1; i >= 0; i-- {
		if s.log[i].Role == Tool {
			return i, s.log[i]
		}
	}
	return -1, Message{}
}

// noteCarries returns the content the note round's request carries for
// the tool result with the given call id.
func noteCarries(msgs []Message, id string) string {
	for _, m := range msgs {
		if m.Role == Tool && m.ToolCallID == id {
			return m.Content
		}
	}
	return ""
}

// TestNoteSeesTheNewestResult: the note round's request carries the
// round's newest result whole when it fits its share, not only its
// summary.
func TestNoteSeesTheNewestResult(t *testing.T) {
	b := newBuild(Config{Window: 64000, PrefixChars: 2000})
	b.user("Review internal/spec.md and implement it.")
	b.send()
	var p Plan
	for r := 0; p.Event != Note && r < 400; r++ {
		b.s.Append(Message{Role: Assistant, Content: "Next.", ToolCalls: []ToolCall{{ID: fmt.Sprint("x", r), Name: "run", Arguments: `{}`}}})
		b.s.Append(Message{Role: Tool, ToolCallID: fmt.Sprint("x", r), Content: strings.Repeat(fmt.Sprintf("line %d of the output\n", r), 90), Payload: Payload{Kind: Command, Path: fmt.Sprint("make ", r)}})
		if p = b.s.Plan(); p.Event == Append {
			b.answer(p)
		}
	}
	if p.Event != Note {
		t.Fatalf("Plan() = %s, want the note round", p.Event)
	}
	_, res := lastResult(b.s)
	if got := noteCarries(p.Messages, res.ToolCallID); got != res.Content {
		t.Errorf("the note round carries %d bytes of the newest result (%q…), want it whole (%d bytes)", len(got), headUpTo(got, 80), len(res.Content))
	}
	if share := b.s.est.NewChars(b.s.Budget().Recap / noteSharePart); len(res.Content) > share {
		t.Fatalf("the result (%d bytes) is over the note's share (%d): the test tests nothing", len(res.Content), share)
	}
	if p.Estimate+noteReply > b.s.Budget().Window {
		t.Errorf("the note round's estimate %d leaves no room for the note", p.Estimate)
	}
}

// TestNoteSeesAsMuchAsFits: when the round's results do not fit whole,
// the newest keeps its head and tail cut to the room, within the limit,
// and the older ones go to their summaries.
func TestNoteSeesAsMuchAsFits(t *testing.T) {
	b := newBuild(Config{Window: 32000, PrefixChars: 2000})
	b.user("Look at the logs.")
	b.send()
	s := b.s
	s.Append(Message{Role: Assistant, Content: "Reading both.", ToolCalls: []ToolCall{
		{ID: "a", Name: "run", Arguments: `{"command":"make a"}`}, {ID: "b", Name: "run", Arguments: `{"command":"make b"}`}}})
	old := strings.Repeat("building module alpha step ok\n", 400)
	newest := "FIRST LINE of b\n" + strings.Repeat("compiling package beta unit fine\n", 600) + "LAST LINE of b\n"
	s.Append(Message{Role: Tool, ToolCallID: "a", Content: old, Payload: Payload{Kind: Command, Path: "make a"}})
	s.Append(Message{Role: Tool, ToolCallID: "b", Content: newest, Payload: Payload{Kind: Command, Path: "make b"}})
	s.sync()
	q := sizeOf(Message{Role: User, Content: NoteInstruction})
	size, fresh := s.counted()
	whole := s.price(size+q, fresh+q)
	limit := whole - s.est.New(len(old)+len(newest)/2)
	msgs := s.view.Messages()
	size, fresh = s.noteResults(msgs, s.currentStart(), limit, 1<<30, q)
	if got := s.price(size+q, fresh+q); got > limit {
		t.Errorf("the note round's estimate %d is over the limit %d", got, limit)
	}
	gotB := noteCarries(msgs, "b")
	if !strings.HasPrefix(gotB, "FIRST LINE of b") || !strings.HasSuffix(gotB, "LAST LINE of b\n") || len(gotB) >= len(newest) || len(gotB) < len(newest)/4 {
		t.Errorf("the newest result stands as %d bytes (%q…), want its head and tail cut to the room", len(gotB), headUpTo(gotB, 60))
	}
	if gotA := noteCarries(msgs, "a"); len(gotA) >= len(old)/2 {
		t.Errorf("the older result keeps %d of %d bytes, want its summary", len(gotA), len(old))
	}
}

// TestNoteShareBoundsTheResults: what the note round carries of the
// round's results beyond their summaries stays within its share.
func TestNoteShareBoundsTheResults(t *testing.T) {
	b := newBuild(Config{Window: 128000, PrefixChars: 2000})
	b.user("Run it.")
	b.send()
	s := b.s
	log := "FIRST LINE\n" + strings.Repeat("a line of the build output\n", 2000) + "LAST LINE\n"
	s.Append(Message{Role: Assistant, Content: "Running.", ToolCalls: []ToolCall{{ID: "a", Name: "run", Arguments: `{}`}}})
	s.Append(Message{Role: Tool, ToolCallID: "a", Content: log, Payload: Payload{Kind: Command, Path: "make"}})
	s.sync()
	msgs := s.view.Messages()
	sum, _ := s.summarize(len(s.log) - 1)
	s.noteResults(msgs, s.currentStart(), s.Budget().Usable, 3000, 100)
	got := noteCarries(msgs, "a")
	if len(got) > len(sum)+3000 || len(got) < len(sum)+3000-minCut || !strings.HasPrefix(got, "FIRST LINE") || !strings.HasSuffix(got, "LAST LINE\n") {
		t.Errorf("the note round carries %d bytes of a %d-byte log (summary %d), want its head and tail in its summary's size and 3000 bytes more", len(got), len(log), len(sum))
	}
}

// TestWholeNoteOnACheckpointedEngine: on an engine that restarts from
// checkpoints, a note round that carries the request whole goes after a
// checkpoint request of that request, which the round after the note
// sends again as it stands; so that round restarts a few tokens before
// its end, where without the checkpoint request it would restart a
// micro-batch before the note round's end.
func TestWholeNoteOnACheckpointedEngine(t *testing.T) {
	for _, plant := range []bool{true, false} {
		cfg := Config{Window: 32768, PrefixChars: 2000, Reserve: 1024, Cache: CacheModel{Class: CacheCheckpointed}}
		s, e, p := toTheNote(cfg)
		send := func(msgs []Message) (n, from int) {
			n, from = e.send(cfg.PrefixChars, msgs)
			s.Observe(Usage{PromptTokens: n, CompletionTokens: 100, Cached: from, CachedKnown: true})
			return n, from
		}
		if p.Event != Note || !s.note.whole {
			t.Fatalf("Plan() = %s (whole %v), want a note round carrying the request whole", p.Event, s.note.whole)
		}
		if len(p.Checkpoints) != 1 || !slices.EqualFunc(p.Checkpoints[0], s.view.Messages(), sameMessage) {
			t.Fatalf("the note round's checkpoint requests are %d, want one: the request as it stands", len(p.Checkpoints))
		}
		if plant {
			for _, m := range p.Checkpoints {
				n, c := e.send(cfg.PrefixChars, m)
				s.ObserveCheckpoint(Usage{PromptTokens: n, CompletionTokens: 1, Cached: c, CachedKnown: true})
			}
		}
		send(p.Messages)
		s.SetNote("state: working\nbuild: passes")
		held := s.Plan()
		if held.Event != Append || !slices.EqualFunc(held.Messages, p.Messages[:len(p.Messages)-1], sameMessage) {
			t.Fatalf("after the note, Plan() = %s with %d messages, want the note round's request less the question", held.Event, len(held.Messages))
		}
		n, from := send(held.Messages)
		switch {
		case plant && n-from > 16:
			t.Errorf("the round after the note prefilled %d tokens again, want at most 16", n-from)
		case !plant && n-from <= 16:
			t.Errorf("without the checkpoint request the round after the note prefilled only %d tokens: the test tests nothing", n-from)
		}
	}
}

// TestRidingNoteIsNotWholeOnACheckpointedEngine: on a turn template the
// note's question rides at the end of the last result, so the round after
// the note would part from it inside that result, where no checkpoint
// request can plant a checkpoint: on an engine that restarts from
// checkpoints that note round shows the new results as their summaries,
// with no checkpoint request, and the fold comes at once.
func TestRidingNoteIsNotWholeOnACheckpointedEngine(t *testing.T) {
	for _, class := range []CacheClass{CacheCheckpointed, CacheDense} {
		cfg := Config{Window: 32768, PrefixChars: 2000, Reserve: 1024, Cache: CacheModel{Class: class}, Reasoning: ReasoningTurn}
		s, _, p := toTheNote(cfg)
		if p.Event != Note || !strings.HasSuffix(p.Messages[len(p.Messages)-1].Content, NoteInstruction) {
			t.Fatalf("%s: Plan() = %s, want a note round whose question rides at the end of the last result", class, p.Event)
		}
		if want := class != CacheCheckpointed; s.note.whole != want || len(p.Checkpoints) != 0 {
			t.Errorf("%s: the note round carries the request whole: %v, want %v; %d checkpoint requests, want none", class, s.note.whole, want, len(p.Checkpoints))
		}
	}
}

// toTheNote plays rounds of command output on a planner of cfg against
// a checkpointing engine up to the first plan that is not an append.
func toTheNote(cfg Config) (*Planner, *checkpointEngine, Plan) {
	s := NewPlanner(cfg)
	e := &checkpointEngine{}
	s.Append(Message{Role: User, Content: "Review internal/spec.md and implement it."})
	return s, e, playOn(s, e, cfg, 0)
}

// playOn goes on with toTheNote's rounds from round r0, each request
// sent to e, up to the next plan that is neither an append nor a fold.
func playOn(s *Planner, e *checkpointEngine, cfg Config, r0 int) Plan {
	var p Plan
	for r := r0; r < r0+400; r++ {
		if p = s.Plan(); p.Event != Append && p.Event != Fold {
			break
		}
		sendOn(s, e, cfg.PrefixChars, p)
		s.Append(Message{Role: Assistant, Content: "Next.", ToolCalls: []ToolCall{{ID: fmt.Sprint("x", r), Name: "run", Arguments: `{}`}}})
		s.Append(Message{Role: Tool, ToolCallID: fmt.Sprint("x", r), Content: strings.Repeat(fmt.Sprintf("line %d of the output\n", r), 40), Payload: Payload{Kind: Command, Path: fmt.Sprint("make ", r)}})
	}
	return p
}

// TestNotePlantThatMissesIsDropped: where the engine's chat template adds
// a long generation prompt, the checkpoint a note round's checkpoint
// request leaves stands past where the note round parts from it, and the
// note round restarts a micro-batch before its end; the planner takes
// that from the engine's figures, and its later note rounds go without
// one (and show the new results as their summaries).
func TestNotePlantThatMissesIsDropped(t *testing.T) {
	const tail = 24 // the generation prompt's tokens
	cfg := Config{Window: 32768, PrefixChars: 2000, Reserve: 1024, Cache: CacheModel{Class: CacheCheckpointed}}
	s, e, p := toTheNote(cfg)
	if p.Event != Note || len(p.Checkpoints) != 1 {
		t.Fatalf("Plan() = %s with %d checkpoint requests, want a note round after one", p.Event, len(p.Checkpoints))
	}
	n, c := e.send(cfg.PrefixChars, p.Checkpoints[0])
	s.ObserveCheckpoint(Usage{PromptTokens: n + tail, CompletionTokens: 1, Cached: c, CachedKnown: true})
	nn, _ := e.send(cfg.PrefixChars, p.Messages)
	s.Observe(Usage{PromptTokens: nn + tail, CompletionTokens: 200, Cached: n + tail - 4 - 512, CachedKnown: true})
	s.SetNote("state: working\nbuild: passes")
	if p = playOn(s, e, cfg, 1000); p.Event != Note {
		t.Fatalf("Plan() = %s, want the next note round", p.Event)
	}
	if s.note.whole || len(p.Checkpoints) != 0 {
		t.Errorf("after a note round that restarted a micro-batch before its plant's end, the next carries the request whole: %v, with %d checkpoint requests; want neither", s.note.whole, len(p.Checkpoints))
	}
}

// TestHeldFoldKeepsTheNotedResultWhole: after a note round that carried
// the round's large new result whole, the engine holds that result as
// it is. When the note round's count shows the request smaller than the
// planner priced it (the round before it was counted denser), the
// history is no longer due, but the new result still looks over the
// window at the cautious price of bytes never sent. Cut now, the request
// would part from the note round's inside the result, and the engine
// would prefill it again, for a fold that comes at the next round all
// the same. So the round after the note goes as the note round's
// request less the question, the result whole, and the fold is held.
func TestHeldFoldKeepsTheNotedResultWhole(t *testing.T) {
	cfg := Config{Window: 32768, PrefixChars: 2000, Reserve: 1024, Cache: CacheModel{Class: CacheCheckpointed}}
	line := "a line of the test log, unique enough\n"
	// The large result's lines: the fewest that bring the request over
	// the shed point.
	var s *Planner
	var e *checkpointEngine
	var big string
	for lines := 100; s == nil && lines < 4000; lines += 4 {
		ps, pe := toLargeResult(t, cfg)
		content := "FIRST LINE\n" + strings.Repeat(line, lines) + "LAST LINE\n"
		ps.Append(Message{Role: Assistant, Content: "Running the tests.", ToolCalls: []ToolCall{{ID: "big", Name: "run", Arguments: `{}`}}})
		ps.Append(Message{Role: Tool, ToolCallID: "big", Content: content, Payload: Payload{Kind: Command, Path: "make test"}})
		ps.sync()
		if ps.likely() > ps.Budget().ShedPoint {
			s, e, big = ps, pe, content
		}
	}
	if s == nil {
		t.Fatal("no result brought the request over the shed point")
	}
	b := s.Budget()
	p := s.Plan()
	if p.Event != Note || !s.note.whole || noteCarries(p.Messages, "big") != big {
		t.Fatalf("Plan() = %s (whole %v), want a note round carrying the large result whole", p.Event, s.note.whole)
	}
	sendOn(s, e, cfg.PrefixChars, p)
	s.SetNote("state: testing\nlog: make test")
	if s.likely() > b.ShedPoint || s.estimate() <= b.Usable {
		t.Fatalf("after the note round, likely %d (shed point %d), estimate %d (usable %d): the test tests nothing", s.likely(), b.ShedPoint, s.estimate(), b.Usable)
	}
	held := s.Plan()
	if len(held.Cut) > 0 || held.Event != Append || noteCarries(held.Messages, "big") != big {
		t.Fatalf("after the note, Plan() = %s with %d cuts, want an append carrying the noted result whole", held.Event, len(held.Cut))
	}
}

// toLargeResult plays rounds of small results, each request sent to a
// checkpointing engine, until the request is three quarters of the
// usable room, above the shed target; the engine counts the last of
// them 3% denser than the others.
func toLargeResult(t *testing.T, cfg Config) (*Planner, *checkpointEngine) {
	t.Helper()
	s := NewPlanner(cfg)
	e := &checkpointEngine{}
	s.Append(Message{Role: User, Content: "Review internal/spec.md and implement it."})
	for r := 0; r < 400; r++ {
		p := s.Plan()
		if p.Event != Append {
			t.Fatalf("round %d: Plan() = %s before the large result, want an append", r, p.Event)
		}
		last := s.likely() > s.Budget().Usable*3/4
		n, c := e.send(cfg.PrefixChars, p.Messages)
		if last {
			n = n * 103 / 100
		}
		s.Observe(Usage{PromptTokens: n, CompletionTokens: 150, Cached: c, CachedKnown: true})
		if last {
			return s, e
		}
		s.Append(Message{Role: Assistant, Content: "Next.", ToolCalls: []ToolCall{{ID: fmt.Sprint("x", r), Name: "run", Arguments: `{}`}}})
		s.Append(Message{Role: Tool, ToolCallID: fmt.Sprint("x", r), Content: strings.Repeat(fmt.Sprintf("line %d of the output\n", r), 40), Payload: Payload{Kind: Command, Path: fmt.Sprint("make ", r)}})
	}
	t.Fatal("the rounds never filled three quarters of the window")
	return nil, nil
}
