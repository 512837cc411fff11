package replay

import (
	"context"
	"math"
	"testing"

	"github.com/reika-lsp/reika/agent/sim"
)

// The time model: prefilled ÷ the prefill speed + decoded ÷ the decode
// speed.
func TestSpeedsSeconds(t *testing.T) {
	for _, c := range []struct {
		sp                 Speeds
		prefilled, decoded int
		want               float64
	}{
		{Speeds{800, 40}, 0, 0, 0},
		{Speeds{800, 40}, 8000, 0, 10},
		{Speeds{800, 40}, 0, 400, 10},
		// A 400-token note costs what re-prefilling 8000 tokens does.
		{Speeds{800, 40}, 8000, 400, 20},
		{Speeds{1000, 25}, 2500, 50, 4.5},
		{Speeds{0.5, 2}, 1, 1, 2.5},
	} {
		if got := c.sp.Seconds(c.prefilled, c.decoded); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%+v.Seconds(%d, %d) = %v, want %v", c.sp, c.prefilled, c.decoded, got, c.want)
		}
	}
}

func TestSpeedsCheck(t *testing.T) {
	for _, c := range []struct {
		sp Speeds
		ok bool
	}{
		{DefaultSpeeds, true},
		{Speeds{0.1, 0.1}, true},
		{Speeds{}, false},
		{Speeds{800, 0}, false},
		{Speeds{0, 40}, false},
		{Speeds{-800, 40}, false},
		{Speeds{800, -1}, false},
		{Speeds{math.NaN(), 40}, false},
		{Speeds{800, math.Inf(1)}, false},
	} {
		if err := c.sp.Check(); (err == nil) != c.ok {
			t.Errorf("%+v.Check() = %v, want ok %v", c.sp, err, c.ok)
		}
	}
}

// shortSession is the first n rounds of a recorded session.
func shortSession(t *testing.T, name string, n int) *Recording {
	t.Helper()
	for _, s := range testSessions(t) {
		if s.Name == name {
			short := *s
			short.Rounds = s.Rounds[:n]
			return &short
		}
	}
	t.Fatalf("no session %s", name)
	return nil
}

// generatedTokens is what the engine generates for a recorded reply: its
// text and its calls, as the template renders them.
func generatedTokens(r Round) int {
	text := r.Assistant.Content
	for _, c := range r.Assistant.ToolCalls {
		text += callText(c.Name, c.Arguments)
	}
	return sim.CountTokens(text)
}

// Decoded counts every token the engine generated: each turn's reply, and
// the summaries summarize writes besides, so that a strategy that writes
// summaries decodes more than one that writes none for the same turns.
func TestDecodedCountsWhatTheEngineGenerated(t *testing.T) {
	s := shortSession(t, "fold-orphans", 40)
	decoded := map[string]Result{}
	for _, name := range []string{"sliding", "summarize"} {
		r, err := Replay(context.Background(), s, 16000, name)
		if err != nil {
			t.Fatal(err)
		}
		decoded[name] = r
	}
	turns := map[string]int{}
	side := map[string]int{}
	for name, r := range decoded {
		sum := 0
		for _, q := range r.Requests {
			sum += q.Decoded
			if q.Side {
				side[name] += q.Decoded
				continue
			}
			if want := generatedTokens(s.Rounds[q.Round-1]); q.Decoded != want {
				t.Errorf("%s round %d: decoded %d, want the recorded reply's %d tokens", name, q.Round, q.Decoded, want)
			}
			turns[name] += q.Decoded
		}
		if r.Row.Decoded != sum {
			t.Errorf("%s: Row.Decoded = %d, want the requests' sum %d", name, r.Row.Decoded, sum)
		}
	}
	if turns["sliding"] == 0 || turns["sliding"] != turns["summarize"] {
		t.Errorf("the turns decoded %d (sliding) and %d (summarize), want the same replies, more than none", turns["sliding"], turns["summarize"])
	}
	if side["sliding"] != 0 || side["summarize"] == 0 {
		t.Errorf("side calls decoded %d (sliding) and %d (summarize), want none and some", side["sliding"], side["summarize"])
	}
	if got, want := decoded["summarize"].Row.Decoded, decoded["sliding"].Row.Decoded+side["summarize"]; got != want {
		t.Errorf("summarize decoded %d, want sliding's %d and its summaries' %d", got, decoded["sliding"].Row.Decoded, side["summarize"])
	}
}

// Replay prices a row at DefaultSpeeds, Results at the speeds it is
// given, and refuses speeds that are not positive.
func TestResultsPricesAtTheGivenSpeeds(t *testing.T) {
	s := shortSession(t, "many-small", 20)
	one, err := Replay(context.Background(), s, 16000, "sliding")
	if err != nil {
		t.Fatal(err)
	}
	row := one.Row
	if want := round(DefaultSpeeds.Seconds(row.Prefilled, row.Decoded), 1); row.EngineSeconds != want || want == 0 {
		t.Errorf("Replay: EngineSeconds = %v, want %v at %+v", row.EngineSeconds, want, DefaultSpeeds)
	}
	sp := Speeds{Prefill: 3000, Decode: 120}
	res, err := Results(context.Background(), Options{Recordings: []*Recording{s}, Windows: []int{16000}, Strategies: []string{"sliding"}, Speeds: sp})
	if err != nil {
		t.Fatal(err)
	}
	got := res[0].Row
	if want := round(sp.Seconds(got.Prefilled, got.Decoded), 1); got.EngineSeconds != want || want >= row.EngineSeconds {
		t.Errorf("Results at %+v: EngineSeconds = %v, want %v, less than %v at the defaults", sp, got.EngineSeconds, want, row.EngineSeconds)
	}
	if got.Prefilled != row.Prefilled || got.Decoded != row.Decoded {
		t.Errorf("Results at %+v: prefilled %d, decoded %d, want the tokens of Replay, %d and %d", sp, got.Prefilled, got.Decoded, row.Prefilled, row.Decoded)
	}
	if _, err := Results(context.Background(), Options{Recordings: []*Recording{s}, Windows: []int{16000}, Speeds: Speeds{Prefill: 800}}); err == nil {
		t.Error("Results with a decode speed of 0: no error, want one")
	}
}
