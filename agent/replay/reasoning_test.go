package replay

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/sim"
)

// Thinking gives every reply reasoning of a thinking model's length, about
// what it read, the same for the same seed, none of the planted facts in
// it; a recording that reasons already is left as it is.
func TestThinking(t *testing.T) {
	s := testSessions(t)[0]
	a, b := Thinking(s, 7), Thinking(s, 7)
	if a == s || len(a.Rounds) != len(s.Rounds) {
		t.Fatalf("Thinking returned the recording itself or %d rounds of %d", len(a.Rounds), len(s.Rounds))
	}
	total, mentions := 0, 0
	for i, r := range a.Rounds {
		n := len(r.Assistant.Reasoning)
		if n < 200 || n > 6000 {
			t.Errorf("round %d: %d bytes of reasoning, want a few hundred to a few thousand", i+1, n)
		}
		if r.Assistant.Reasoning != b.Rounds[i].Assistant.Reasoning {
			t.Fatalf("round %d: two calls with one seed differ", i+1)
		}
		if s.Rounds[i].Assistant.Reasoning != "" || r.Assistant.Content != s.Rounds[i].Assistant.Content {
			t.Fatalf("round %d: the recording itself changed, or the reply's text did", i+1)
		}
		total += n
		if i > 0 && len(s.Rounds[i-1].Results) > 0 {
			if p := s.Rounds[i-1].Results[0].Payload.Path; p != "" && strings.Contains(r.Assistant.Reasoning, clipWords(p, 10)) {
				mentions++
			}
		}
		for _, f := range s.Facts {
			if strings.Contains(r.Assistant.Reasoning, f.Value) {
				t.Errorf("round %d: the reasoning repeats fact %s", i+1, f.Key)
			}
		}
	}
	content := 0
	for _, r := range s.Rounds {
		content += len(r.Assistant.Content)
	}
	if total <= 2*content {
		t.Errorf("%d bytes of reasoning for %d of content: a thinking model writes more before its replies than in them", total, content)
	}
	if mentions < len(a.Rounds)/2 {
		t.Errorf("%d of %d replies name what the result before them was about", mentions, len(a.Rounds))
	}
	if c := Thinking(s, 8); c.Rounds[1].Assistant.Reasoning == a.Rounds[1].Assistant.Reasoning {
		t.Error("another seed gives the same reasoning")
	}
	if again := Thinking(a, 9); again != a {
		t.Error("a recording with reasoning was given more")
	}
}

// On the template that renders only the current turn's reasoning (Qwen3's),
// ours prefills at most 1.25 its growth at 16k on a recorded session given
// a thinking model's reasoning, and keeps every fact: the note round's
// question rides in the newest result, and the reasoning after a shrink
// event's change goes with it (issue: 1.89 before). Without the reasoning
// the same session is replayed as recorded.
func TestReplayThinkingTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole session's replay: it runs in the pass without the race detector")
	}
	s := sessionNamed(t, "engine-cached-tokens")
	res, err := ReplayOn(context.Background(), Engine{Reasoning: sim.TurnReasoning}, s, 16000, "ours")
	if err != nil {
		t.Fatal(err)
	}
	r := res.Row
	if r.Failed() || r.Ratio > 1.25 || r.FactsKept < 1 {
		t.Errorf("turn template at 16k: %s", rowText(r))
	}
	if res.Last.Messages == nil {
		t.Fatal("no last request")
	}
	carried := 0
	for _, m := range res.Last.Messages {
		if m.Reasoning != "" {
			carried++
		}
	}
	if carried == 0 {
		t.Error("the last request carries no reasoning: the current turn's is rendered by this template")
	}
}

func sessionNamed(t *testing.T, name string) *Recording {
	for _, s := range testSessions(t) {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no recorded session %q", name)
	return nil
}

func rowText(r Row) string {
	return fmt.Sprintf("ratio %.2f, facts %.2f, events %d, stalled at %d", r.Ratio, r.FactsKept, r.Events, r.Stalled)
}
