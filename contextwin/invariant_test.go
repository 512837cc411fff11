package contextwin

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/internal/testslow"
)

// The invariants of every plan that no type holds: the budget adds up, an
// event leaves the request under the shed point, an append is an append
// of the request before it, the recap stays in its budget, results follow
// their calls, the current round and the user's messages are carried, and
// the figures the planner keeps for each entry are the ones its view
// item holds. What the view's totals are, the view's type says.

// check holds the invariants of every plan.
func (h *harness) check(p Plan) {
	t := h.t
	t.Helper()
	s := h.s
	b := s.Budget()
	if b.Window > 0 {
		for _, v := range []int{b.Reserve, b.Usable, b.ShedPoint, b.ShedTarget, b.FoldKeeps, b.Recap} {
			if v < 0 {
				t.Fatalf("budget %+v has a negative figure", b)
			}
		}
		if b.Reserve+b.Usable != b.Window || b.FoldKeeps+b.Recap > b.Usable {
			t.Fatalf("budget %+v adds up past the window", b)
		}
	}
	if p.TooSmall && p.Problem == "" {
		t.Fatalf("a too-small plan says nothing")
	}
	switch p.Event {
	case Shed, Fold, Emergency:
		h.events++
		// An event never leaves the request above the shed point (so the
		// next request is not an event again), nor the window.
		// A request degraded to fit (its newest results cut further) may
		// stand above the shed point, never above the usable window.
		if !p.TooSmall && (s.likely() > b.Usable || len(p.Cut) == 0 && s.likely() > b.ShedPoint && h.mustStay() <= b.ShedPoint) {
			t.Fatalf("after a %s the request is %d tokens likely (%d estimated, %d cut): above the shed point %d or the usable %d (window %d)",
				p.Event, s.likely(), p.Estimate, len(p.Cut), b.ShedPoint, b.Usable, b.Window)
		}
	case Append:
		if h.prev != nil && !p.TooSmall && b.Window > 0 {
			for i := range h.prev {
				if i >= len(p.Messages) || !sameMessage(h.prev[i], p.Messages[i]) {
					t.Fatalf("an append plan changed message %d of the previous request (%d messages then, %d now): %q became %q", i, len(h.prev), len(p.Messages), headUpTo(h.prev[i].Content, 60), headUpTo(p.Messages[min(i, len(p.Messages)-1)].Content, 60))
				}
			}
		}
	}
	if r := s.fold.recap; r != nil {
		if limit := s.est.NewChars(b.Recap); b.Window > 0 && len(r.Text) > max(limit, 0) {
			t.Fatalf("recap of %d bytes is over its budget of %d", len(r.Text), limit)
		}
	}
	checkPairs(t, p.Messages)
	h.checkItems()
	if p.Event != Note { // the note round asks before the current round
		h.checkCurrentRound(p)
	}
	if !p.TooSmall {
		// The task and every later message of the user's, word for word,
		// whatever was folded — or, one too long for its room in the
		// recap, as the recap carries it (its head, its tail, its facts).
		// A note round leaves out an ask no request carried yet.
		for i, m := range s.log {
			if p.Event == Note && i == s.lastUser && i >= s.sent {
				continue
			}
			if s.isVerbatimUser(i) && !carriesUser(p.Messages, s, i) {
				t.Fatalf("the user's message %d (%q) is not in the request verbatim", i, headUpTo(m.Content, 60))
			}
		}
	}
	if b.Window == 0 && len(p.Shed)+p.Folded+len(p.Cut) > 0 {
		t.Fatalf("with no window a plan shed %d, folded %d, cut %d", len(p.Shed), p.Folded, len(p.Cut))
	}
}

// checkItems: every view item that stands for an entry holds the entry's
// figures — the planner keeps both, and no type ties them.
func (h *harness) checkItems() {
	h.t.Helper()
	s := h.s
	for k, it := range s.view.items {
		if it.of < 0 {
			continue
		}
		if e := &s.entries[it.of]; it.size != e.size || it.fresh != e.fresh {
			h.t.Fatalf("view item %d holds %d bytes, %d of them fresh; its entry %d says %d and %d", k, it.size, it.fresh, it.of, e.size, e.fresh)
		}
	}
}

// mustStay is what no event may remove from a request, in tokens: the
// fixed prefix, what the recap carries verbatim (the user's messages, the
// task payload) and the current round.
func (h *harness) mustStay() int {
	s := h.s
	n := s.cfg.PrefixChars + s.fold.front.verbatim
	for i := s.currentStart(); i < len(s.entries); i++ {
		n += s.entries[i].size
	}
	return s.est.Known(n)
}

// checkPairs: every result follows the call it answers, and every call
// has its result.
func checkPairs(t testing.TB, msgs []Message) {
	t.Helper()
	open := map[string]bool{}
	for i, m := range msgs {
		switch m.Role {
		case Assistant:
			for id := range open {
				t.Fatalf("message %d: call %s has no result before the next assistant message", i, id)
			}
			for _, c := range m.ToolCalls {
				open[c.ID] = true
			}
		case Tool:
			if !open[m.ToolCallID] {
				t.Fatalf("message %d: result for %s without its call", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		default:
			if len(open) > 0 && m.Role == User {
				t.Fatalf("message %d: a user message while calls %v wait for results", i, open)
			}
		}
	}
}

// checkCurrentRound: the current round is in the request — whole, or for
// a result the plan cut, its head — and so is the task payload.
func (h *harness) checkCurrentRound(p Plan) {
	t := h.t
	t.Helper()
	s := h.s
	cut := map[int]bool{}
	for _, c := range p.Cut {
		cut[c.Index] = true
	}
	for i := s.currentStart(); i < len(s.entries); i++ {
		e := &s.entries[i]
		want := s.log[i].Content
		if cut[i] || e.form == cutToFit {
			want = headUpTo(want, 100)
		}
		if !containsContent(p.Messages, want) {
			t.Fatalf("the current round's message %d (%s, %d bytes) is not in the request", i, s.log[i].Role, len(s.log[i].Content))
		}
	}
	if tp := s.task.payload; tp >= 0 && s.entries[tp].form != cutToFit && s.turnStart() == s.task.turn {
		if !containsContent(p.Messages, s.log[tp].Content) {
			t.Fatalf("the task payload (message %d) is not in the request byte for byte", tp)
		}
	}
}

// TestInvariantsGrid runs scripted sessions over a grid of windows, fixed
// prefixes and reserves, with results up to ten times the window: three
// of the windows by default, all eight under the build tag long.
func TestInvariantsGrid(t *testing.T) {
	skipRacePass(t)
	windows := []int{2000, 4096, 8192, 16000, 24000, 32768, 131072, 2_000_000}
	prefixes := []int{0, 6000, 40_000, 800_000} // up to 200k tokens
	if !testslow.Long {
		windows = []int{2000, 16000, 131072} // all of them under the build tag long
	}
	for _, w := range windows {
		for _, prefix := range prefixes {
			for _, reserve := range []int{0, w / 4} {
				name := fmt.Sprintf("W%d/prefix%d/reserve%d", w, prefix, reserve)
				t.Run(name, func(t *testing.T) {
					rounds := 60
					if w >= 1_000_000 {
						rounds = 25
					}
					cfg := Config{Window: w, PrefixChars: prefix, Reserve: reserve}
					h := newHarness(t, cfg)
					h.run(session(w, rounds, w+prefix))
					if prefix == 0 && w >= 8192 && h.sent == 0 {
						t.Errorf("no request was sent")
					}
				})
			}
		}
	}
}

// TestDeterministic: the same session gives byte-identical requests.
func TestDeterministic(t *testing.T) {
	skipRacePass(t)
	for _, w := range []int{4096, 16000, 131072} {
		a, b := newHarness(t, Config{Window: w, PrefixChars: 3000}), newHarness(t, Config{Window: w, PrefixChars: 3000})
		a.run(session(w, 80, 7))
		b.run(session(w, 80, 7))
		if len(a.plans) != len(b.plans) {
			t.Fatalf("W%d: %d and %d requests", w, len(a.plans), len(b.plans))
		}
		for i := range a.plans {
			pa, pb := a.plans[i].Messages, b.plans[i].Messages
			if len(pa) != len(pb) {
				t.Fatalf("W%d request %d: %d and %d messages", w, i, len(pa), len(pb))
			}
			for k := range pa {
				if !sameMessage(pa[k], pb[k]) {
					t.Fatalf("W%d request %d message %d differs between two runs", w, i, k)
				}
			}
		}
	}
}

// TestNoWindow: nothing is shed, cut or folded; older results collapse to
// their summaries; only the newest rounds keep their reasoning.
func TestNoWindow(t *testing.T) {
	h := newHarness(t, Config{PrefixChars: 3000, ReasoningRounds: 2})
	h.run(session(16000, 30, 3))
	p := h.plans[len(h.plans)-1]
	withReasoning := 0
	for _, m := range p.Messages {
		if m.Reasoning != "" {
			withReasoning++
		}
	}
	if withReasoning > 2 {
		t.Errorf("with no window %d messages kept their reasoning, want at most 2", withReasoning)
	}
	if p.MaxTokens != 0 {
		t.Errorf("with no window MaxTokens = %d, want 0 (left to the engine)", p.MaxTokens)
	}
	if got := p.Chip.String(); strings.Contains(got, "%") {
		t.Errorf("with no window the chip = %q, want the size alone", got)
	}
}

// TestTooSmall: a window that cannot hold the prefix and one round is a
// reported state.
func TestTooSmall(t *testing.T) {
	s := NewPlanner(Config{Window: 2000, PrefixChars: 100_000})
	s.Append(Message{Role: User, Content: "hello"})
	p := s.Plan()
	if !p.TooSmall || !strings.Contains(p.Problem, "window too small") {
		t.Errorf("Plan() with a 100k-byte prefix in a 2000-token window = TooSmall %v %q; want window too small", p.TooSmall, p.Problem)
	}
}

// skipRacePass skips a test that takes seconds under -short, the README's
// pass with the race detector: contextwin starts no goroutine, so the
// detector has nothing to find in it, and the pass without it (the
// README's second go test) runs the test.
func skipRacePass(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("no goroutines to race: runs in the pass without the race detector")
	}
}
