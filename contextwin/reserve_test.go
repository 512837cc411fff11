package contextwin

import "testing"

func TestReserveLearning(t *testing.T) {
	var r Reserve
	if got := r.Tokens(32000); got != 2048 {
		t.Fatalf("Tokens before any completion = %d, want 2048", got)
	}
	for _, n := range []int{300, 500, 1200} {
		r.Observe(n, "tool_calls")
	}
	if got := r.Tokens(32000); got != 2048 {
		t.Errorf("Tokens after short completions = %d, want 2048 (it never goes below the start)", got)
	}
	r.Observe(3000, "stop") // p90 of 4 samples is 3000: ×1.25 = 3750 → 3840
	if got := r.Tokens(32000); got != 3840 {
		t.Errorf("Tokens after a 3000-token completion = %d, want 3840", got)
	}
	r.Observe(20000, "length") // cut by the limit: says nothing
	if got := r.Tokens(32000); got != 3840 {
		t.Errorf("Tokens after a length-cut completion = %d, want 3840", got)
	}
	r.Observe(9000, "stop")
	if got := r.Tokens(32000); got != 8000 {
		t.Errorf("Tokens capped = %d, want a quarter of 32000", got)
	}
	for range 20 {
		r.Observe(100, "stop")
	}
	if got := r.Tokens(32000); got != 8000 {
		t.Errorf("Tokens after many short ones = %d, want 8000: it only rises", got)
	}
	if len(r.Samples) != reserveSamples {
		t.Errorf("samples kept = %d, want %d", len(r.Samples), reserveSamples)
	}
}

func TestReservePinned(t *testing.T) {
	r := Reserve{Pinned: 6144}
	r.Observe(30000, "stop")
	if got := r.Tokens(24000); got != 6144 {
		t.Errorf("pinned Tokens = %d, want 6144", got)
	}
}
