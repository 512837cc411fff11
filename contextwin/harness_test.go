package contextwin

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// The harness of the invariant tests: scripted sessions, and a driver
// that plays them against a Planner the way the agent does.

// The engine of these tests counts 3.2 bytes a token — denser than the
// 4-byte baseline, sparser than the 1.6 bytes new text is priced at — and
// refuses a prompt that does not fit its window, as llama.cpp does.
const engineCharsPerToken = 3.2

func engineTokens(chars int) int { return int(float64(chars)/engineCharsPerToken) + 1 }

// corpus is source-like text that results are cut from.
var corpus = func() string {
	var b strings.Builder
	for i := 0; b.Len() < 1<<20; i++ {
		fmt.Fprintf(&b, "func handler%d(w http.ResponseWriter, r *http.Request) error {\n\treturn serve(w, r, %d)\n}\n\n", i, i)
	}
	return b.String()
}()

// text returns n bytes of corpus-like text starting at a seed-dependent
// place.
func text(n, seed int) string {
	if n <= 0 {
		return ""
	}
	var b strings.Builder
	off := (seed * 7919) % (len(corpus) / 2)
	for b.Len() < n {
		take := min(n-b.Len(), len(corpus)-off)
		b.WriteString(corpus[off : off+take])
		off = 0
	}
	return b.String()
}

// step is one thing that happens in a scripted session.
type step struct {
	user    string // a new user message, or
	results []result
	note    string // the note the model writes when asked ("" fails it)
}

type result struct {
	kind  Kind
	path  string
	chars int
	task  bool
}

// harness drives a Planner the way the agent does and checks every plan.
type harness struct {
	t       testing.TB
	s       *Planner
	cfg     Config
	ended   string    // why the run ended early
	prev    []Message // the last request sent, for the append check
	sent    int       // requests sent
	events  int
	plans   []Plan
	noteFor string
	// count, when set, is the engine's own count of a request of chars
	// bytes (engineTokens otherwise); misreport, when set, is the count it
	// reports for request seq (from 1) it counted n tokens, 0 for none.
	count     func(chars int) int
	misreport func(seq, n int) int
	// maxPrompt and maxNote are the largest request and note round sent,
	// by the engine's own count.
	maxPrompt, maxNote int
}

func newHarness(t testing.TB, cfg Config) *harness {
	return &harness{t: t, s: NewPlanner(cfg), cfg: cfg}
}

// play puts step n of a session into the planner: the user's message,
// or a round of results.
func (h *harness) play(n int, st step) {
	if st.user != "" {
		h.s.Append(Message{Role: User, Content: st.user})
	} else {
		h.round(n, st.results)
	}
}

// run plays the steps; after each it plans, checks, and "sends".
func (h *harness) run(steps []step) {
	for n, st := range steps {
		h.play(n, st)
		h.noteFor = st.note
		if !h.request() {
			return // the agent ends the run on a state it cannot fix
		}
	}
}

// round appends an assistant message calling one tool per result, then
// the results.
func (h *harness) round(n int, rs []result) {
	a := Message{Role: Assistant, Content: fmt.Sprintf("Step %d: looking further.", n), Reasoning: text(300, n)}
	for i, r := range rs {
		id := fmt.Sprintf("call_%d_%d", n, i)
		a.ToolCalls = append(a.ToolCalls, ToolCall{ID: id, Name: r.kind.String(), Arguments: `{"path":"` + r.path + `"}`})
	}
	h.s.Append(a)
	for i, r := range rs {
		h.s.Append(Message{Role: Tool, ToolCallID: a.ToolCalls[i].ID, Content: text(r.chars, n*31+i),
			Payload: Payload{Kind: r.kind, Path: r.path, From: 1, To: r.chars / 60, Total: r.chars / 60, Task: r.task}})
	}
}

// request plans, handles the note round and overflows, checks, and
// records the engine's answer. It reports false when the run must end.
func (h *harness) request() bool {
	p := h.s.Plan()
	h.check(p)
	if p.Event == Note {
		h.answer(p, 200)
		h.s.SetNote(h.noteFor)
		p = h.s.Plan()
		h.check(p)
	}
	if p.TooSmall {
		h.ended = "too small: " + p.Problem
		return false
	}
	if h.overflows(p) {
		h.prev = p.Messages // the engine saw it, and refused it
		p = h.s.Overflow(h.promptTokens(p), h.cfg.Window)
		h.check(p)
		if p.GiveUp || p.TooSmall {
			h.ended = fmt.Sprintf("after an overflow (give up %v): %s", p.GiveUp, p.Problem)
			return false
		}
		if h.overflows(p) {
			if q := h.s.Overflow(h.promptTokens(p), h.cfg.Window); !q.GiveUp {
				h.t.Fatalf("a second overflow without an answer in between did not give up: %+v", q.Event)
			}
			h.ended = "a second overflow"
			return false
		}
	}
	h.answer(p, 150)
	return true
}

func (h *harness) promptTokens(p Plan) int {
	n := h.cfg.PrefixChars
	for _, m := range p.Messages {
		n += sizeOf(m)
	}
	if h.count != nil {
		return h.count(n)
	}
	return engineTokens(n)
}

func (h *harness) overflows(p Plan) bool {
	return h.cfg.Window > 0 && h.promptTokens(p) >= h.cfg.Window
}

func (h *harness) answer(p Plan, completion int) {
	n := h.promptTokens(p)
	if p.Event == Note {
		h.maxNote = max(h.maxNote, n)
	} else {
		h.maxPrompt = max(h.maxPrompt, n)
	}
	if h.misreport != nil {
		n = h.misreport(h.sent+1, n)
	}
	h.s.Observe(Usage{PromptTokens: n, CompletionTokens: completion, FinishReason: "tool_calls"})
	if p.Event != Note {
		h.prev = p.Messages
	}
	h.sent++
	h.plans = append(h.plans, p)
}

func containsContent(msgs []Message, want string) bool {
	for _, m := range msgs {
		if strings.Contains(m.Content, want) {
			return true
		}
	}
	return false
}

// session builds a scripted session: a task, then rounds of reads, greps,
// commands and edits whose sizes scale with the window, some far larger.
func session(w, rounds, seed int) []step {
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(w)))
	steps := []step{{user: "Review internal/spec.md and make the handlers follow it. Keep the v1 API."}}
	for r := 0; r < rounds; r++ {
		if r > 0 && r%25 == 0 {
			steps = append(steps, step{user: fmt.Sprintf("Now the next part, number %d.", r/25)})
			continue
		}
		var rs []result
		for k := 0; k < 1+rng.IntN(3); k++ {
			res := result{kind: Read, path: fmt.Sprintf("internal/h%d.go", rng.IntN(40)), chars: 200 + rng.IntN(max(w/2, 1000))}
			switch x := rng.IntN(10); {
			case r == 0 && k == 0:
				res = result{kind: Read, path: "internal/spec.md", chars: min(4000, w)}
			case x < 2:
				res.kind, res.path = Search, "handler"
			case x < 3:
				res.kind, res.path, res.chars = Command, "go test ./...", 100+rng.IntN(20000)
				if rng.IntN(4) == 0 {
					res.chars = rng.IntN(w*40 + 1) // up to 10× the window in tokens
				}
			case x < 5:
				res.kind, res.chars = Diff, 300+rng.IntN(1500)
			}
			rs = append(rs, res)
		}
		note := "key: value\nbuild: go test ./..."
		if rng.IntN(4) == 0 {
			note = ""
		}
		steps = append(steps, step{results: rs, note: note})
	}
	return steps
}
