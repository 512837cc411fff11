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
	e.Learn(40000, 40000) // ratio 4: denser than 1.6 bytes a token
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
	if !e.Learn(80000, 9000) {
		t.Errorf("Learn(80000 bytes, 9000 tokens) = not truncated, want truncated (expected ~24000)")
	}
	if e.Ratio != 1.2 {
		t.Errorf("ratio after a truncated count = %v, want 1.2 unchanged", e.Ratio)
	}
	if e.Learn(1000, 100) {
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
