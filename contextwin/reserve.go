package contextwin

import (
	"math"
	"slices"
)

// Reserve learning.
const (
	reserveSamples = 16   // completions remembered
	reserveStep    = 256  // the reserve moves in steps, so the shed point does too
	reserveMargin  = 1.25 // headroom over the 90th percentile
)

// Reserve is the room held back for the model's reply. It starts at
// DefaultReserve and rises to fit what the model actually generates: the
// 90th percentile of the last 16 completions that ended on their own,
// times 1.25, rounded up to a step of 256 tokens, capped at a quarter of
// the window. It only ever rises. A pinned reserve (REIKA_MIN_GEN_TOKENS)
// does not learn.
//
// The zero value starts at DefaultReserve and learns.
type Reserve struct {
	Pinned  int   `json:"pinned,omitempty"`
	Floor   int   `json:"floor,omitempty"` // the learned reserve, 0 before any
	Samples []int `json:"samples,omitempty"`
}

// Observe records one completion. Only completions that ended on their own
// ("stop", "tool_calls") teach: one cut by the length limit says nothing
// about how long the reply wanted to be.
func (r *Reserve) Observe(completionTokens int, finish string) {
	if r.Pinned > 0 || completionTokens <= 0 || (finish != "stop" && finish != "tool_calls") {
		return
	}
	r.Samples = append(r.Samples, completionTokens)
	if len(r.Samples) > reserveSamples {
		r.Samples = r.Samples[len(r.Samples)-reserveSamples:]
	}
	sorted := slices.Clone(r.Samples)
	slices.Sort(sorted)
	p90 := sorted[int(math.Ceil(0.9*float64(len(sorted))))-1]
	want := int(math.Ceil(float64(p90)*reserveMargin/reserveStep)) * reserveStep
	r.Floor = max(r.Floor, want)
}

// Tokens is the reserve for a window of the given size.
func (r Reserve) Tokens(window int) int {
	if r.Pinned > 0 {
		return r.Pinned
	}
	g := DefaultReserve
	if r.Floor > g {
		g = min(r.Floor, max(window/4, DefaultReserve))
	}
	return g
}
