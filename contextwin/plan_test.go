package contextwin

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// build is a small session builder for targeted tests.
type build struct {
	s *Planner
	n int
}

func newBuild(cfg Config) *build {
	b := &build{s: NewPlanner(cfg)}
	return b
}

func (b *build) user(text string) *build {
	b.s.Append(Message{Role: User, Content: text})
	return b
}

// call appends an assistant message with one call and its result.
func (b *build) call(kind Kind, path string, content string) int {
	b.n++
	id := fmt.Sprintf("c%d", b.n)
	b.s.Append(Message{Role: Assistant, Content: "next", ToolCalls: []ToolCall{{ID: id, Name: kind.String(), Arguments: `{"path":"` + path + `"}`}}})
	b.s.Append(Message{Role: Tool, ToolCallID: id, Content: content, Payload: Payload{Kind: kind, Path: path, From: 1, To: strings.Count(content, "\n") + 1, Total: strings.Count(content, "\n") + 1}})
	return b.s.Len() - 1
}

// send plans and answers like an engine counting 3.2 bytes a token.
func (b *build) send() Plan {
	p := b.s.Plan()
	b.answer(p)
	return p
}

// answerAsEstimated answers like an engine whose count matches the
// estimate exactly: what was dense stays dense.
func (b *build) answerAsEstimated(p Plan) {
	b.s.Observe(Usage{PromptTokens: p.Estimate, CompletionTokens: 120, FinishReason: "stop"})
}

func (b *build) answer(p Plan) {
	n := b.s.cfg.PrefixChars
	for _, m := range p.Messages {
		n += sizeOf(m)
	}
	b.s.Observe(Usage{PromptTokens: engineTokens(n), CompletionTokens: 120, FinishReason: "tool_calls"})
}

// body is n bytes of function body: no top-level declarations, so a
// read of it sheds to a short summary.
func body(n int) string {
	return headUpTo(strings.Repeat("\tvalue = compute(value, 1)\n", n/27+1), n)
}

// TestShedLate: a shed changes the request as late as the room it needs
// allows. Everything before the first shed result stays byte for byte (the
// engine keeps it cached) — here the oldest reasoning and the small read;
// the newest large results before the current round go; the current round
// never does; the next event is at least 0.3 U of growth away.
func TestShedLate(t *testing.T) {
	b := newBuild(Config{Window: 16000, PrefixChars: 2000})
	b.user("Tidy up the handlers.")
	b.send()
	b.s.Append(Message{Role: Assistant, Content: "thinking", Reasoning: text(2000, 1), ToolCalls: []ToolCall{{ID: "r1", Name: "read", Arguments: `{}`}}})
	small := text(1200, 2)
	b.s.Append(Message{Role: Tool, ToolCallID: "r1", Content: small, Payload: Payload{Kind: Read, Path: "small.go"}})
	b.send()
	large1 := b.call(Read, "large1.go", body(12000))
	b.send()
	large2 := b.call(Read, "large2.go", body(12000))
	prev := b.send().Messages
	cur := b.call(Read, "now.go", text(11600, 5)) // (the reasoning counts 0.7 of its bytes: reasoningBytes)
	p := b.s.Plan()
	if p.Event != Shed {
		t.Fatalf("Plan().Event = %s, want shed", p.Event)
	}
	var order []string
	first := len(b.s.entries)
	shed := map[int]bool{}
	for _, r := range p.Shed {
		order = append(order, r.What)
		first = min(first, r.Index)
		shed[r.Index] = true
		if r.Index == cur {
			t.Errorf("the current round's result was shed")
		}
		if r.What == "reasoning" || r.What == "read small.go" {
			t.Errorf("%s, the oldest thing there, was shed: %q", r.What, order)
		}
	}
	// The shed takes a suffix: from its first result on, every large
	// result goes (the newest first in price), none before it.
	if !shed[large2] || (shed[large1] && first != large1) || (!shed[large1] && first != large2) {
		t.Errorf("shed = %q, want the newest large results from some point on", order)
	}
	k := b.s.view.find(first)
	for i := 0; i < k; i++ {
		if !sameMessage(prev[i], p.Messages[i]) {
			t.Errorf("message %d, before the first shed result, changed", i)
		}
	}
	bud := b.s.Budget()
	if gap := int(float64(bud.Usable) * minGapShare); b.s.likely() > bud.ShedPoint-gap {
		t.Errorf("after the shed the request is %d tokens: the next event is less than %d tokens of growth away (shed point %d)", b.s.likely(), gap, bud.ShedPoint)
	}
	last := p.Messages[len(p.Messages)-1].Content
	if !strings.Contains(last, "were shed to their summaries") || !strings.Contains(last, "read large2.go") || !strings.Contains(last, "Run them again") {
		t.Errorf("the newest message carries no shed notice: %q", tailUpTo(last, 300))
	}
	// The shed result stands as its summary in the request.
	found := false
	for _, m := range p.Messages {
		if m.ToolCallID != "" && strings.HasPrefix(m.Content, "Read large2.go lines") {
			found = true
		}
	}
	if !found {
		t.Errorf("no message holds the summary of large2.go")
	}
}

// TestAppendBetweenEvents: below the shed point every request starts with
// the previous one, byte for byte.
func TestAppendBetweenEvents(t *testing.T) {
	b := newBuild(Config{Window: 32000, PrefixChars: 4000})
	b.user("Read the code.")
	prev := b.send().Messages
	for r := 0; r < 10; r++ {
		b.call(Read, fmt.Sprintf("f%d.go", r), text(2000, r))
		p := b.send()
		if p.Event != Append {
			break
		}
		for i := range prev {
			if !sameMessage(prev[i], p.Messages[i]) {
				t.Fatalf("round %d: message %d changed in an append", r, i)
			}
		}
		if len(p.Messages) != len(prev)+2 {
			t.Fatalf("round %d: %d messages after %d, want two more", r, len(p.Messages), len(prev))
		}
		prev = p.Messages
	}
}

// TestLargeResultIsCutNotTheHistory: a single result larger than the room
// left is cut to it — head and tail, a marker between — and nothing older
// is shed.
func TestLargeResultIsCutNotTheHistory(t *testing.T) {
	b := newBuild(Config{Window: 16000, PrefixChars: 2000})
	b.user("Run the tests.")
	b.send()
	b.call(Read, "a.go", text(6000, 1))
	b.send()
	log := "BEGIN\n" + text(200_000, 2) + "\nFAIL: TestX (0.01s)\n"
	i := b.call(Command, "go test ./...", log)
	p := b.s.Plan()
	if p.Event != Append || len(p.Shed) != 0 || len(p.Cut) != 1 || p.Cut[0].Index != i {
		t.Fatalf("Plan() = %s, %d shed, cuts %+v; want an append that cuts the log only", p.Event, len(p.Shed), p.Cut)
	}
	got := p.Messages[len(p.Messages)-1].Content
	if !strings.HasPrefix(got, "BEGIN") || !strings.HasSuffix(got, "FAIL: TestX (0.01s)\n") || !strings.Contains(got, "hit the context limit") {
		t.Errorf("the cut log lost its head, its tail or the marker: %q … %q", headUpTo(got, 80), tailUpTo(got, 120))
	}
	if !p.Cut[0].Spill {
		t.Errorf("a 200 KB command log is not marked for spilling")
	}
	if p.Estimate > b.s.Budget().ShedPoint {
		t.Errorf("estimate %d above the shed point %d after the cut", p.Estimate, b.s.Budget().ShedPoint)
	}
}

// TestCutPriority: the payload that defines the task gets its room first,
// then the newest read; small results stay whole; the rest share.
func TestCutPriority(t *testing.T) {
	b := newBuild(Config{Window: 16000, PrefixChars: 2000})
	b.user("Implement what docs/spec.md asks for.")
	b.send()
	b.s.Append(Message{Role: Assistant, Content: "reading", ToolCalls: []ToolCall{
		{ID: "a", Name: "read", Arguments: `{}`}, {ID: "b", Name: "grep", Arguments: `{}`},
		{ID: "c", Name: "read", Arguments: `{}`}, {ID: "d", Name: "bash", Arguments: `{}`}}})
	spec := text(12000, 1)
	b.s.Append(Message{Role: Tool, ToolCallID: "a", Content: spec, Payload: Payload{Kind: Read, Path: "docs/spec.md"}})
	b.s.Append(Message{Role: Tool, ToolCallID: "b", Content: "x.go:1: match\n", Payload: Payload{Kind: Search, Path: "match"}})
	b.s.Append(Message{Role: Tool, ToolCallID: "c", Content: text(30000, 2), Payload: Payload{Kind: Read, Path: "big.go"}})
	b.s.Append(Message{Role: Tool, ToolCallID: "d", Content: text(30000, 3), Payload: Payload{Kind: Command, Path: "make"}})
	p := b.s.Plan()
	cut := map[int]Cut{}
	for _, c := range p.Cut {
		cut[c.Index] = c
	}
	n := b.s.Len()
	if _, ok := cut[n-4]; ok {
		t.Errorf("the task's spec was cut: %+v", cut[n-4])
	}
	if _, ok := cut[n-3]; ok {
		t.Errorf("a 14-byte search result was cut")
	}
	read, cmd := cut[n-2], cut[n-1]
	if read.To == 0 || cmd.To == 0 {
		t.Fatalf("cuts = %+v, want big.go and the command cut", p.Cut)
	}
	if read.To <= cmd.To {
		t.Errorf("the newest read kept %d bytes, the command %d: the read comes first", read.To, cmd.To)
	}
	if p.Estimate > b.s.Budget().ShedPoint && p.Event == Append {
		t.Errorf("estimate %d above the shed point after fitting", p.Estimate)
	}
}

// longSession fills the window with turns that shedding alone cannot
// shrink: long explanations, which are never shed. It returns the first
// plan that is not an append.
func longSession(cfg Config) (*build, Plan) {
	b := newBuild(cfg)
	b.user("Review internal/spec.md and implement it.")
	b.send()
	b.call(Read, "internal/spec.md", text(3000, 1))
	b.send()
	for r := 0; ; r++ {
		b.s.Append(Message{Role: Assistant, Content: strings.Repeat("I considered the design at length. ", 60), ToolCalls: []ToolCall{{ID: fmt.Sprint("x", r), Name: "read", Arguments: `{}`}}})
		b.s.Append(Message{Role: Tool, ToolCallID: fmt.Sprint("x", r), Content: text(1500, r), Payload: Payload{Kind: Read, Path: fmt.Sprintf("f%d.go", r)}})
		p := b.s.Plan()
		if p.Event != Append {
			return b, p
		}
		b.answer(p)
	}
}

// TestNoteThenFold: when shedding cannot reach the target, one round with
// tools forbidden asks for a note; the fold that follows leads its recap
// with it, carries the task verbatim, and lands under the target. The
// note round carried the request whole, so the round's own request is
// that request as it stands (cached to its end) and the fold waits for
// the next round (holdFold).
func TestNoteThenFold(t *testing.T) {
	b, p := longSession(Config{Window: 16000, PrefixChars: 2000})
	s := b.s
	if p.Event != Note || p.Messages[len(p.Messages)-1].Content != NoteInstruction {
		t.Fatalf("Plan() = %s, want the note round", p.Event)
	}
	note := p.Messages
	b.answer(p)
	s.SetNote("decision: keep the v1 API\nbuild: go test ./...")
	p = s.Plan()
	if p.Event != Append || !slices.EqualFunc(p.Messages, note[:len(note)-1], sameMessage) {
		t.Fatalf("after a whole note round, Plan() = %s with %d messages, want an append of the note's %d less the question", p.Event, len(p.Messages), len(note)-1)
	}
	b.answer(p)
	b.s.Append(Message{Role: Assistant, Content: "Next.", ToolCalls: []ToolCall{{ID: "y", Name: "read", Arguments: `{}`}}})
	b.s.Append(Message{Role: Tool, ToolCallID: "y", Content: text(400, 99), Payload: Payload{Kind: Read, Path: "g.go"}})
	p = s.Plan()
	if p.Event != Fold || p.Folded == 0 {
		t.Fatalf("after the note, Plan() = %s folding %d, want a fold", p.Event, p.Folded)
	}
	if p.Estimate > s.Budget().ShedTarget {
		t.Errorf("after the fold the estimate %d is above the target %d", p.Estimate, s.Budget().ShedTarget)
	}
	// The recap leads the request, or — a fold into the middle recap —
	// follows the older turns, left as they were sent, which carry the
	// task themselves.
	recap := recapMessage(p.Messages)
	for _, want := range []string{"decision: keep the v1 API", "folded to stay inside the context window"} {
		if !strings.Contains(recap, want) {
			t.Errorf("the recap message lacks %q:\n%s", want, headUpTo(recap, 1500))
		}
	}
	if !containsContent(p.Messages, "Review internal/spec.md and implement it.") {
		t.Errorf("the request lacks the task verbatim")
	}
	if s.fold.recap == nil || len(s.fold.recap.Text) > s.est.NewChars(s.Budget().Recap) {
		t.Errorf("recap %d bytes over its budget %d", len(s.fold.recap.Text), s.est.NewChars(s.Budget().Recap))
	}
	checkPairs(t, p.Messages)
}

// recapMessage is the content of the request's recap: the message that
// says it folded turns.
func recapMessage(msgs []Message) string {
	for _, m := range msgs {
		if m.Role == User && strings.Contains(m.Content, "folded to stay inside the context window") {
			return m.Content
		}
	}
	return ""
}

// TestFailedNoteFoldsWithoutOne: an empty note is no note.
func TestFailedNoteFoldsWithoutOne(t *testing.T) {
	b, p := longSession(Config{Window: 16000, PrefixChars: 2000})
	if p.Event != Note {
		t.Fatalf("longSession ended on %s, want the note round", p.Event)
	}
	b.answerAsEstimated(p)
	b.s.SetNote("   ")
	p = b.s.Plan()
	if p.Event != Fold || strings.Contains(recapMessage(p.Messages), "Note:") {
		t.Errorf("Plan() after an empty note = %s with a note section; want a fold without one", p.Event)
	}
}

// TestTaskPayloadSurvives: the payload that defines the task is never
// shed, and a fold carries it verbatim.
func TestTaskPayloadSurvives(t *testing.T) {
	b, p := longSession(Config{Window: 16000, PrefixChars: 2000})
	spec := b.s.log[2].Content
	b.answerAsEstimated(p)
	b.s.SetNote("")
	p = b.s.Plan()
	if b.s.task.payload != 2 {
		t.Fatalf("task payload elected = %d, want the read of internal/spec.md (2)", b.s.task.payload)
	}
	if !containsContent(p.Messages, spec) {
		t.Errorf("the fold did not carry the task's spec verbatim")
	}
	for _, r := range p.Shed {
		if r.Index == 2 {
			t.Errorf("the task payload was shed")
		}
	}
}

// TestPastedPathsDoNotDefineTheTask: a file named only inside a pasted
// block, or as a position (file:line) as a trace gives one, is where
// something happened; the first read of it is not the payload that
// defines the task. A document the user names in their own words is; a
// source file they name is the code to change, not what says what to do.
func TestPastedPathsDoNotDefineTheTask(t *testing.T) {
	for _, c := range []struct {
		ask, path string
		want      bool
	}{
		{"CI failed again:\n```\nsee docs/cache.md:136\n```\nWhat is going on?", "docs/cache.md", false},
		{"It says docs/cache.md:136 under load. Why?", "docs/cache.md", false},
		{"Read docs/cache.md and fix what this log shows:\n```\nFAIL test/lru.test.js\n```", "docs/cache.md", true},
		{"The rule is in cache.md, see the trace:\n```\nat load (docs/cache.md:136:4)\n```", "docs/cache.md", true},
		{"Read src/cache/lru.js and fix what this log shows:\n```\nFAIL test/lru.test.js\n```", "src/cache/lru.js", false},
		{"The bug is in lru.go; fix it.", "src/cache/lru.go", false},
	} {
		b := newBuild(Config{Window: 32000, PrefixChars: 2000})
		b.user(c.ask)
		i := b.call(Read, c.path, body(3000))
		b.s.electTaskPayload()
		if got := b.s.task.payload == i; got != c.want {
			t.Errorf("asked %q: the read of %s defines the task = %v, want %v", c.ask, c.path, got, c.want)
		}
	}
}

// TestEmergency: an overflow folds without a model call, learns the window
// and the ratio from the engine's figures, tells the model what went, and
// gives up on a second overflow.
func TestEmergency(t *testing.T) {
	b := newBuild(Config{PrefixChars: 2000}) // no window known
	b.user("Go through every file.")
	b.send()
	for r := 0; r < 30; r++ {
		b.call(Read, fmt.Sprintf("f%d.go", r), text(3000, r))
		b.send()
	}
	b.call(Read, "last.go", text(3000, 99))
	p := b.s.Plan()
	p = b.s.Overflow(20000, 8192)
	if b.s.Window() != 8192 {
		t.Errorf("window after the overflow = %d, want the engine's 8192", b.s.Window())
	}
	if p.Event != Emergency || p.GiveUp || p.TooSmall {
		t.Fatalf("Overflow() = %s (give up %v, too small %v %s), want an emergency fold", p.Event, p.GiveUp, p.TooSmall, p.Problem)
	}
	if p.Estimate > b.s.Budget().ShedTarget {
		t.Errorf("estimate after the emergency fold %d above the target %d", p.Estimate, b.s.Budget().ShedTarget)
	}
	last := p.Messages[len(p.Messages)-1].Content
	if !strings.Contains(last, "refused the last request as longer than its window") {
		t.Errorf("no gap notice on the newest message: %q", tailUpTo(last, 300))
	}
	if q := b.s.Overflow(9000, 8192); !q.GiveUp {
		t.Errorf("a second overflow before an answer = %s, want give up", q.Event)
	}
	b.answer(p)
	if q := b.s.Plan(); q.GiveUp || q.TooSmall {
		t.Errorf("after an answer the session is stuck: %+v", q.Problem)
	}
}

// TestObserveFlagsTruncation: a prompt count far below the estimate is an
// engine that dropped part of the prompt.
func TestObserveFlagsTruncation(t *testing.T) {
	b := newBuild(Config{Window: 32000, PrefixChars: 2000})
	b.user("x")
	for r := 0; r < 10; r++ {
		b.call(Read, "f.go", text(3000, r))
	}
	b.s.Plan()
	if b.s.Observe(Usage{PromptTokens: 500}) != Truncated {
		t.Errorf("Observe(500 tokens for ~32 KB) = not truncated, want flagged")
	}
	if b.s.Estimator().Ratio != 0 {
		t.Errorf("ratio learned from a truncated count: %v", b.s.Estimator().Ratio)
	}
}

// TestPlanMaxTokens: the window less the prompt and a margin, under the
// configured and catalog caps.
func TestPlanMaxTokens(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want func(p Plan) int
	}{
		{Config{Window: 16000, PrefixChars: 4000}, func(p Plan) int { return 16000 - p.Estimate - 384 }},
		{Config{Window: 16000, PrefixChars: 4000, MaxTokens: 1000}, func(Plan) int { return 1000 }},
		{Config{Window: 16000, PrefixChars: 4000, OutputLimit: 800, MaxTokens: 1000}, func(Plan) int { return 800 }},
		{Config{PrefixChars: 4000}, func(Plan) int { return 0 }},
		{Config{PrefixChars: 4000, MaxTokens: 1000}, func(Plan) int { return 1000 }},
	} {
		b := newBuild(tc.cfg)
		b.user("hello")
		p := b.s.Plan()
		if p.MaxTokens != tc.want(p) {
			t.Errorf("%+v: MaxTokens = %d, want %d", tc.cfg, p.MaxTokens, tc.want(p))
		}
	}
}

func TestMinimalAndTargetFraction(t *testing.T) {
	if got := NewPlanner(Config{Window: 24000, Minimal: true}).Budget().RepoMapChars; got != 0 {
		t.Errorf("minimal mode RepoMapChars = %d, want 0", got)
	}
	for _, tc := range []struct {
		f    float64
		want float64
	}{{0, 0.7}, {0.5, 0.5}, {0.1, 0.3}, {0.99, 0.95}} {
		b := NewPlanner(Config{Window: 24000, TargetFraction: tc.f}).Budget()
		if got := float64(b.ShedTarget) / float64(b.ShedPoint); got < tc.want-0.001 || got > tc.want+0.001 {
			t.Errorf("TargetFraction %v: target/shed point = %.3f, want %.2f", tc.f, got, tc.want)
		}
	}
}

// TestCompact: a fold on demand, with the note round first; and the two
// states in which there is nothing to do.
func TestCompact(t *testing.T) {
	if err := NewPlanner(Config{}).Compact(); err == nil || !strings.Contains(err.Error(), "no known window") {
		t.Errorf("Compact() with no window = %v, want no known window", err)
	}
	b := newBuild(Config{Window: 32000, PrefixChars: 2000})
	b.user("start")
	if err := b.s.Compact(); err == nil || !strings.Contains(err.Error(), "nothing to fold") {
		t.Errorf("Compact() on a new session = %v, want nothing to fold", err)
	}
	b.send()
	// A few small rounds: a fold would replace less than a recap and the
	// note cost, and grow the request.
	for r := 0; r < 3; r++ {
		b.call(Read, fmt.Sprintf("small%d.go", r), body(40))
		b.send()
	}
	if err := b.s.Compact(); err == nil || !strings.Contains(err.Error(), "nothing worth folding") {
		t.Errorf("Compact() after three small rounds = %v, want nothing worth folding", err)
	}
	for r := 0; r < 30; r++ {
		b.call(Read, fmt.Sprintf("f%d.go", r), body(2000))
		if p := b.send(); p.Event != Append {
			t.Fatalf("round %d: %s, want the session to stay under the shed point", r, p.Event)
		}
	}
	before := b.s.estimate()
	if err := b.s.Compact(); err != nil {
		t.Fatalf("Compact() = %v", err)
	}
	p := b.s.Plan()
	if p.Event != Note {
		t.Fatalf("Plan() after Compact = %s, want the note round", p.Event)
	}
	b.answerAsEstimated(p)
	b.s.SetNote("state: half done")
	p = b.s.Plan()
	if p.Event != Fold || p.Folded == 0 || p.Estimate >= before {
		t.Fatalf("Plan() after the note = %s folding %d, estimate %d from %d; want a fold that shrinks", p.Event, p.Folded, p.Estimate, before)
	}
	if !strings.Contains(p.Messages[0].Content, "state: half done") {
		t.Errorf("the recap lacks the note")
	}
	b.answer(p)
	if p := b.s.Plan(); p.Event != Append {
		t.Errorf("the plan after a compaction = %s, want an append", p.Event)
	}

	// The user edits the recap: the next request carries the edit.
	if !b.s.EditRecap("the user's own recap") {
		t.Fatalf("EditRecap() = false with a recap")
	}
	p = b.s.Plan()
	if !strings.Contains(p.Messages[0].Content, "the user's own recap") || strings.Contains(p.Messages[0].Content, "state: half done") {
		t.Errorf("after EditRecap the first message = %q", headUpTo(p.Messages[0].Content, 300))
	}
}

// TestNeverAbortWhatFits: a request that fits the usable window is sent,
// even above the shed target, and only a prefix and instruction that do
// not fit stop the run — with the numbers, and without suggesting minimal
// mode to a session already in it.
func TestNeverAbortWhatFits(t *testing.T) {
	// 8k window, a 2000-token prefix, and a round whose results alone are
	// near the shed target: the plan cuts them and sends.
	b := newBuild(Config{Window: 8192, PrefixChars: 8000})
	b.user("Look at the logs.")
	b.send()
	b.call(Command, "go test ./...", text(30000, 3))
	p := b.s.Plan()
	if p.TooSmall {
		t.Fatalf("Plan() = too small (%s), want a request cut to fit the usable %d", p.Problem, b.s.Budget().Usable)
	}
	if p.Estimate > b.s.Budget().Usable {
		t.Errorf("estimate %d above usable %d", p.Estimate, b.s.Budget().Usable)
	}

	for _, minimal := range []bool{false, true} {
		s := NewPlanner(Config{Window: 2048, PrefixChars: 7000, Minimal: minimal})
		s.Append(Message{Role: User, Content: "Fix it."})
		p := s.Plan()
		if !p.TooSmall {
			t.Fatalf("minimal %v: Plan() sent a request whose prefix alone exceeds the window", minimal)
		}
		if !strings.Contains(p.Problem, "fixed prefix (") || !strings.Contains(p.Problem, "larger window") {
			t.Errorf("minimal %v: problem %q does not give the numbers and the fix", minimal, p.Problem)
		}
		if got := strings.Contains(p.Problem, "minimal mode"); got == minimal {
			t.Errorf("minimal %v: problem %q suggests minimal mode = %v", minimal, p.Problem, got)
		}
	}
}

// TestObservePrefix: the warm-up's count teaches the ratio before the
// first planned request, so a prefix the engine counts small is priced
// small.
func TestObservePrefix(t *testing.T) {
	s := NewPlanner(Config{Window: 4096, PrefixChars: 12000})
	before := s.prefixTokens()
	s.ObservePrefix(20, Usage{PromptTokens: 1570}) // the engine counted half the baseline
	if after, want := s.prefixTokens(), 12000/4; after >= before || after != want {
		t.Errorf("prefix tokens after ObservePrefix = %d (before %d), want %d: seen bytes, at the 4-byte floor", after, before, want)
	}
}
