package contextwin

import "testing"

func TestEstimatorPricing(t *testing.T) {
	var e Estimator
	if got := e.Known(4000); got != 1000 {
		t.Errorf("Known(4000) unlearned = %d, want 1000", got)
	}
	if got := e.New(1600); got != 1000 {
		t.Errorf("New(1600) = %d, want 1000 (1.6 bytes a token)", got)
	}
	// A prose-heavy session teaches a ratio below 1: decisions ignore it.
	e.Learn(40000, 8000)
	if e.Ratio != 0.8 {
		t.Fatalf("Learn(40000, 8000) ratio = %v, want 0.8", e.Ratio)
	}
	if got := e.Known(4000); got != 1000 {
		t.Errorf("Known(4000) at ratio 0.8 = %d, want 1000 (floor 1.0)", got)
	}
	// Code teaches a ratio above 1; new bytes stay at least as dense.
	e.Learn(40000, 15000)
	if got := e.Known(4000); got != 1500 {
		t.Errorf("Known(4000) at ratio 1.5 = %d, want 1500", got)
	}
	if got := e.New(1600); got != 1000 {
		t.Errorf("New(1600) at ratio 1.5 = %d, want 1000", got)
	}
	e = Estimator{Ratio: 4} // denser than 1.6 bytes a token
	if got := e.New(1600); got != 1600 {
		t.Errorf("New(1600) at ratio 4 = %d, want 1600 (the learned ratio is denser)", got)
	}
	if got := e.NewChars(1600); got != 1600 {
		t.Errorf("NewChars(1600) at ratio 4 = %d, want 1600", got)
	}
}

func TestEstimatorFlagsTruncation(t *testing.T) {
	var e Estimator
	e.Learn(40000, 12000) // ratio 1.2
	if got := e.Learn(80000, 9000); got != Truncated {
		t.Errorf("Learn(80000 bytes, 9000 tokens) = %v, want truncated (expected ~24000)", got)
	}
	if e.Ratio != 1.2 {
		t.Errorf("ratio after a truncated count = %v, want 1.2 unchanged", e.Ratio)
	}
	if got := e.Learn(1000, 100); got == Truncated {
		t.Errorf("Learn(1000, 100) = truncated, want a short prompt not judged")
	}
}

func TestNewCharsInvertsNew(t *testing.T) {
	for _, ratio := range []float64{0, 0.7, 1, 1.3, 2.5, 3, 9} {
		e := Estimator{Ratio: ratio}
		for _, tokens := range []int{0, 1, 7, 1000, 123457} {
			chars := e.NewChars(tokens)
			if got := e.New(chars); got > tokens {
				t.Errorf("ratio %v: New(NewChars(%d) = %d) = %d, want ≤ %d", ratio, tokens, chars, got, tokens)
			}
		}
	}
}

// learnAll feeds counts of ratio r (reported ÷ the baseline) for requests
// of chars bytes.
func learnAll(e *Estimator, chars int, ratios ...float64) []Figure {
	var out []Figure
	for _, r := range ratios {
		out = append(out, e.Learn(chars, int(r*float64(chars)/charsPerToken)))
	}
	return out
}

// TestEstimatorFirstFigure: with no history the band comes from what a
// tokenizer can give: up to a token a byte (a byte-level vocabulary) and
// the template's share is believed, above two tokens a byte is not; far
// below the baseline is a truncated prompt.
func TestEstimatorFirstFigure(t *testing.T) {
	for _, tt := range []struct {
		name     string
		chars    int
		reported int
		want     Figure
	}{
		{"code at 3 bytes a token", 20000, 6700, Learned},
		{"prose at 5 bytes a token", 20000, 4000, Learned},
		{"a byte-level vocabulary", 20000, 20900, Learned},
		{"a short request and its template", 600, 1500, Learned},
		{"ten times code's count", 20000, 67000, Outlier},
		{"ten times a short request's", 2000, 6500, Outlier},
		{"under 8 bytes a token", 40000, 4000, Truncated},
		{"none", 20000, 0, Missing},
	} {
		var e Estimator
		if got := e.Learn(tt.chars, tt.reported); got != tt.want {
			t.Errorf("%s: Learn(%d, %d) = %v, want %v", tt.name, tt.chars, tt.reported, got, tt.want)
		}
		if learned := e.Ratio != 0; learned != (tt.want == Learned) {
			t.Errorf("%s: ratio %v after %v", tt.name, e.Ratio, tt.want)
		}
	}
}

// TestEstimatorRejectsOutlier: a count ten times what the history says is
// not learned, and the next honest one is.
func TestEstimatorRejectsOutlier(t *testing.T) {
	var e Estimator
	learnAll(&e, 20000, 1.3, 1.32, 1.31)
	before := e.Ratio
	if got := learnAll(&e, 20000, 13); got[0] != Outlier {
		t.Fatalf("a ×10 count = %v, want an outlier", got[0])
	}
	if got := learnAll(&e, 8000, 3.9); got[0] != Outlier { // three times, under a token a byte
		t.Fatalf("a ×3 count = %v, want an outlier", got[0])
	}
	if e.Ratio != before {
		t.Errorf("ratio after outliers = %v, want %v unchanged", e.Ratio, before)
	}
	if got := learnAll(&e, 20000, 1.33); got[0] != Learned || e.Ratio < 1.3 || e.Ratio > 1.33 {
		t.Errorf("the next honest count = %v, ratio %v; want learned, about 1.3", got[0], e.Ratio)
	}
	if e.Doubt != 0 {
		t.Errorf("doubt %v kept after an honest count: a later outlier would confirm an old one", e.Doubt)
	}
}

// TestEstimatorMedian: the ratio is the median of recent counts, so one
// count within the band but off the rest is priced for one request (text
// that grew denser is not priced at a lagging median) and then forgotten,
// and it never stands for a verdict.
func TestEstimatorMedian(t *testing.T) {
	var e Estimator
	learnAll(&e, 20000, 1.2, 1.3, 1.25)
	if got := learnAll(&e, 20000, 2.4); got[0] != Learned {
		t.Fatalf("a count within twice the ratio = %v, want learned", got[0])
	}
	if e.Ratio != 2.4 || e.firm() != 1.3 {
		t.Errorf("after 1.2, 1.3, 1.25, 2.4: ratio %v firm %v, want the newest 2.4 priced and the median 1.3 firm", e.Ratio, e.firm())
	}
	learnAll(&e, 20000, 1.28)
	if e.Ratio != 1.28 {
		t.Errorf("ratio after 1.2, 1.3, 1.25, 2.4, 1.28 = %v, want the median 1.28", e.Ratio)
	}
	learnAll(&e, 20000, 1.4, 1.45, 1.5, 1.5)
	if e.Ratio != 1.5 || len(e.Samples) != ratioSamples {
		t.Errorf("ratio %v of %v, want 1.5 of the last %d", e.Ratio, e.Samples, ratioSamples)
	}
	learnAll(&e, 20000, 1.2)
	if e.Ratio != 1.45 {
		t.Errorf("ratio after a sparser count = %v, want the median 1.45: it falls slowly", e.Ratio)
	}
}

// TestEstimatorShiftConfirmed: two counts in a row that agree against the
// history replace it — the engine's figures changed, or the history was
// the outlier — and a lone first count that was misreported is undone so.
func TestEstimatorShiftConfirmed(t *testing.T) {
	var e Estimator
	learnAll(&e, 20000, 3.6) // a first count three times the truth: nothing to tell it by
	got := learnAll(&e, 20000, 1.2, 1.22)
	if got[0] != Outlier || got[1] != Learned {
		t.Fatalf("honest counts after a bad first one = %v, want an outlier then learned", got)
	}
	if e.Ratio < 1.2 || e.Ratio > 1.22 {
		t.Errorf("ratio %v, want the honest 1.2", e.Ratio)
	}
	if got := learnAll(&e, 20000, 3, 1.21); got[0] != Outlier || got[1] != Learned || e.Ratio > 1.22 {
		t.Errorf("an outlier then an honest count = %v, ratio %v; want the outlier not confirmed", got, e.Ratio)
	}
}

// TestEstimatorMissing: no count at all is not a count of 0: nothing is
// learned, and carried bytes are priced at 2.5 a token until one comes.
func TestEstimatorMissing(t *testing.T) {
	var e Estimator
	if got := e.Learn(20000, 0); got != Missing {
		t.Fatalf("Learn(20000, 0) = %v, want missing", got)
	}
	if e.Ratio != 0 || !e.Blind {
		t.Fatalf("after a missing count ratio %v blind %v, want 0 and blind", e.Ratio, e.Blind)
	}
	if got := e.Known(2500); got != 1000 {
		t.Errorf("Known(2500) blind = %d, want 1000 (2.5 bytes a token)", got)
	}
	if got := e.firm(); got != 1 {
		t.Errorf("firm ratio blind = %v, want the baseline: a guess never stops a run", got)
	}
	if got := e.Learn(20000, 6000); got != Learned || e.Blind || e.Known(2500) != 750 {
		t.Errorf("a count after none = %v, blind %v, Known(2500) %d; want learned at 1.2", got, e.Blind, e.Known(2500))
	}
	if got := e.Learn(20000, 0); got != Missing || e.Blind || e.Ratio != 1.2 {
		t.Errorf("a missing count after a learned one = %v, blind %v, ratio %v; want the ratio kept", got, e.Blind, e.Ratio)
	}
}

// TestEstimatorRefused: the count of a refused request is the engine's
// own, on which it acted: it replaces the history and is firm at once.
func TestEstimatorRefused(t *testing.T) {
	var e Estimator
	learnAll(&e, 20000, 1.0, 1.0)
	e.Refused(20000, 15000)
	if e.Ratio != 3 || e.firm() != 3 {
		t.Errorf("after a refusal at ratio 3: ratio %v firm %v, want 3", e.Ratio, e.firm())
	}
	e.Refused(2000, 90000) // above what any tokenizer gives: not believed
	if e.Ratio != 3 {
		t.Errorf("a refusal's impossible count taught ratio %v", e.Ratio)
	}
}
