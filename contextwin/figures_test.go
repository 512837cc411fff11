package contextwin

import (
	"strings"
	"testing"
)

// TestOneBadFigureNeverStops: a count that would make the window too
// small stops no run on its own word — a lone warm-up count far denser
// than the baseline, or one misreported in the middle of a session — and
// the next honest count undoes it. A count the history supports does
// stop it, at once.
func TestOneBadFigureNeverStops(t *testing.T) {
	const window, prefix = 8192, 16000 // the prefix: about 5000 tokens at 3.2 bytes a token, usable 6144
	plan := func(s *Planner) Plan {
		s.Append(Message{Role: User, Content: "Fix the failing test."})
		return s.Plan()
	}

	s := NewPlanner(Config{Window: window, PrefixChars: prefix})
	if got := s.ObservePrefix(20, Usage{PromptTokens: 3 * engineTokens(prefix+20)}); got != Learned {
		t.Fatalf("a lone warm-up count three times the truth = %v: nothing tells it apart", got)
	}
	if p := plan(s); p.TooSmall {
		t.Errorf("a lone warm-up count ×3 stopped the run: %s", p.Problem)
	}

	s = NewPlanner(Config{Window: window, PrefixChars: prefix})
	if got := s.ObservePrefix(20, Usage{PromptTokens: 10 * engineTokens(prefix+20)}); got != Outlier {
		t.Errorf("a warm-up count ×10 = %v, want an outlier", got)
	}
	if p := plan(s); p.TooSmall {
		t.Errorf("a warm-up count ×10 stopped the run: %s", p.Problem)
	}

	// In the middle of a session: learned counts, then one ×10.
	h := newHarness(t, Config{Window: window, PrefixChars: prefix})
	h.misreport = func(seq, n int) int {
		if seq == 4 {
			return 10 * n
		}
		return n
	}
	h.run(session(window, 20, 3))
	if h.ended != "" || h.sent < 20 {
		t.Errorf("one count ×10 at the 4th request: the run ended after %d requests: %s", h.sent, h.ended)
	}
	if r := h.s.Estimator().Ratio; r > 1.5 {
		t.Errorf("ratio after one count ×10 = %v, want the engine's 1.25", r)
	}

	// The window really is too small: a warm-up count within the band
	// says so, and the run stops before any request.
	s = NewPlanner(Config{Window: window, PrefixChars: 24000})
	s.ObservePrefix(20, Usage{PromptTokens: 7000}) // 3.4 bytes a token: believable
	if p := plan(s); !p.TooSmall || !strings.Contains(p.Problem, "fixed prefix (699") {
		t.Errorf("a believable prefix count above usable: TooSmall %v %q, want the prefix's count", p.TooSmall, p.Problem)
	}
}

// TestMissingUsage: an engine that reports no counts (absent or zero) at a
// small window: folds still happen and no request exceeds the usable
// window by the engine's own count (a note round, the room for its note),
// even where it counts code at 2.6 bytes a token, denser than the
// baseline.
func TestMissingUsage(t *testing.T) {
	for _, w := range []int{8192, 16000} {
		for seed := range 4 {
			h := newHarness(t, Config{Window: w, PrefixChars: 6000})
			h.count = func(chars int) int { return int(float64(chars)/2.6) + 1 }
			h.misreport = func(int, int) int { return 0 }
			h.run(session(w, 40, seed))
			if h.ended != "" {
				t.Errorf("W%d seed %d: the run ended: %s", w, seed, h.ended)
			}
			if h.events == 0 {
				t.Errorf("W%d seed %d: no event in %d requests: the test tested nothing", w, seed, h.sent)
			}
			if u := h.s.Budget().Usable; h.maxPrompt > u {
				t.Errorf("W%d seed %d: a request of %d tokens, above the usable %d", w, seed, h.maxPrompt, u)
			}
			if h.maxNote > w-noteReply {
				t.Errorf("W%d seed %d: a note round of %d tokens leaves less than %d for the note", w, seed, h.maxNote, noteReply)
			}
			if e := h.s.Estimator(); e.Ratio != 0 || !e.Blind {
				t.Errorf("W%d seed %d: estimator %+v after no counts, want blind and nothing learned", w, seed, e)
			}
		}
	}
}
